"""vitcore: ablation studies of a small Vision Transformer on Fashion-MNIST.

data -> patches -> models -> train -> store -> verdicts/stats/compare -> app (vitcore/app: Streamlit). Importing the package, its config,
store and stats modules never imports TensorFlow; only models/train/attention do.
"""
