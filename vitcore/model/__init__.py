"""The model layer: the Keras builders, the NumPy forward pass, the parameter anatomy from shapes."""
