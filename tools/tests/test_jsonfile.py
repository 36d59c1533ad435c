# SPDX-License-Identifier: MIT
"""tools/lib/base/jsonfile.py: JSON written whole or not at all, on a disk
that fills midway."""

import errno
import json
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tools.lib.base import jsonfile


def full_disk(doc, f, **kw):
    """json.dump on a disk that fills after a few bytes."""
    f.write('{"partial": ')
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def full_disk_for(key, dump=json.dump):
    """json.dump where the disk fills only for documents with key (the
    other writers' documents, results.json, are written)."""
    def write(doc, f, **kw):
        if isinstance(doc, dict) and key in doc:
            return full_disk(doc, f, **kw)
        return dump(doc, f, **kw)
    return write


class Write(unittest.TestCase):
    def test_written_and_replaced(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "a.json"
            jsonfile.write(path, {"n": 1})
            jsonfile.write(path, {"n": 2})
            self.assertEqual(json.loads(path.read_text()), {"n": 2})
            self.assertEqual(os.listdir(d), ["a.json"])

    def test_a_full_disk_leaves_the_old_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "a.json"
            path.write_text('{"n": 1}\n')
            with mock.patch("json.dump", full_disk), \
                    self.assertRaises(OSError):
                jsonfile.write(path, {"n": 2})
            self.assertEqual(path.read_text(), '{"n": 1}\n')
            self.assertEqual(os.listdir(d), ["a.json"], "no temporary file")


if __name__ == "__main__":
    unittest.main()
