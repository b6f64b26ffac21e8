"""The store layer: run folders written atomically, validated once, indexed, kept healthy."""
