"""The Ablations page: verdict cards and the panels below them."""
