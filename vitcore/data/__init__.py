"""The data layer: Fashion-MNIST from IDX files, its fixed splits, patches, the shipped sample gallery."""
