"""ABC-Eval study import: ``study`` orchestrates, ``reading`` checks the files, ``writing``
writes them."""
