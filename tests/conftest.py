from __future__ import annotations

import os
import tempfile

# Tests run on the CPU with a fixed thread count so golden numbers do not drift with the machine.
os.environ.setdefault("OMP_NUM_THREADS", "2")
# Runs that tests write are signed with a key made for this test session, never the user's own
# (set at import so that every fixture and every subprocess a test starts sees it).
os.environ["TORCHWISE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="torchwise-test-config-")
