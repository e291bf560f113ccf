from __future__ import annotations

# Fixture and corpus scripts are data for the linter, not tests: never import them.
collect_ignore_glob = [
    "fixtures/*", "corpus/*", "real/*", "heldout21/*", "heldout21b/*", "worked21/*", "heldout3/*", "worked3/*",
    "heldout4/*", "worked4/*", "heldout5/*", "worked5/*", "heldout6/*", "worked6/*",
]
