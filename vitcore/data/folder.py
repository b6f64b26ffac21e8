"""Whether $VITCORE_DATA_DIR can be used: checked before any work (the CLI exits with code 2, the app turns
training off), reading the folder's official test labels now (vitcore.data.fashion reads the rest when needed)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from vitcore.data.fashion import DataError, official_test_labels


def data_dir_problem(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why VITCORE_DATA_DIR cannot be used (None when unset or usable): a folder holding the four IDX
    files whose test labels are the official ones (the images are checked when first read)."""
    folder = environ.get("VITCORE_DATA_DIR")
    if folder is None:
        return None
    if not folder.strip():
        return "VITCORE_DATA_DIR is empty (that would be the current folder): unset it, or name the data folder"
    try:
        official_test_labels.__wrapped__()  # not its per-process cache: this checks the folder now
    except DataError as error:
        return f"VITCORE_DATA_DIR does not hold Fashion-MNIST ({str(error).replace(folder, '$VITCORE_DATA_DIR')})"
    except OSError as error:
        return f"VITCORE_DATA_DIR is unreadable ({error.strerror})"
    return None
