from __future__ import annotations

import os

# Tests run on the CPU with a fixed thread count so golden numbers do not drift with the machine.
os.environ.setdefault("OMP_NUM_THREADS", "2")
