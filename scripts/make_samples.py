"""Rebuild vitcore/data/assets/samples.npz and check_images.npz from the real Fashion-MNIST test split."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

from vitcore.data.samples import check_images, load_samples, make_check_images, make_samples

if __name__ == "__main__":
    path = make_samples()
    sample = load_samples(path)
    print(f"{path}: {len(sample.images)} images, test rows {sample.indices.tolist()}")
    print(f"{make_check_images()}: test rows 0 to {len(check_images()) - 1}")
