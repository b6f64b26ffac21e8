"""What the ViT papers tried on small data (issue 21): each a change to the article's ViT, as RunConfig values.

    sincos   pos_embedding "sincos"   Beyer, Zhai & Kolesnikov 2022, "Better plain ViT baselines for ImageNet-1k"
    cls      pooling "cls"            Dosovitskiy et al. 2021, the ViT paper (class token vs global average pooling)
    SPT      tokenizer "shifted"      Lee, Lee & Song 2021, "Vision Transformer for Small-Size Datasets"
    LSA      self_attention "lsa"     same paper
    SPT+LSA  both                     same paper, its full recipe

The `papers` grid trains each at 1,000 and 4,000 rows; `papers-scaling` trains SMALL_DATA_VARIANT at the
data-size grid's other sizes.
"""

from __future__ import annotations

PAPER_VARIANTS: dict[str, dict] = {
    "sincos": {"pos_embedding": "sincos"},
    "cls": {"pooling": "cls"},
    "SPT": {"tokenizer": "shifted"},
    "LSA": {"self_attention": "lsa"},
    "SPT+LSA": {"tokenizer": "shifted", "self_attention": "lsa"},
}
SMALL_DATA_VARIANT = "SPT+LSA"  # the best small-data variant by the paper; the data-size grid trains it
