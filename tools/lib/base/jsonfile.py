# SPDX-License-Identifier: MIT
"""JSON written whole or not at all: into a temporary file in the same
folder, flushed to disk, then renamed over the target (rename is atomic
within a file system). A full disk or a signal midway leaves the old
file, if any, as it was, and no temporary file behind."""

import json
import os
import tempfile
from pathlib import Path

# mkstemp makes its file 0600; the file written is given the mode open()
# would have given it. The umask is read once: setting and restoring it
# later would race with other threads' files.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def write(path, doc, indent=1) -> None:
    """Write doc as JSON to path, atomically; OSError passes through."""
    def dump(f) -> None:
        json.dump(doc, f, indent=indent)
        f.write("\n")
    _atomic(path, dump)


def write_text(path, text) -> None:
    """Write text to path, atomically (tools/check --junit's XML too);
    OSError passes through."""
    _atomic(path, lambda f: f.write(text))


def _atomic(path, fill) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                               dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
