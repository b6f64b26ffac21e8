"""The walkthrough pages (patching, anatomy, token cost, attention, ViT vs convnet)."""
