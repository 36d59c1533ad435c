# SPDX-License-Identifier: MIT
"""tools/lib/base/status.py: a Status is still its word, everywhere a word
went before (JSON, f-strings, dict keys, a word read back from JSON)."""

import json
import unittest

from tools.lib.analysis import ktap
from tools.lib.base.status import Status


class Words(unittest.TestCase):
    def test_the_four_words(self):
        self.assertEqual([str(s) for s in Status],
                         ["pass", "skip", "error", "fail"])

    def test_a_status_is_its_word(self):
        for s in Status:
            self.assertEqual(s, s.value)
            self.assertEqual(f"{s}", s.value)
            self.assertEqual(json.dumps({s: s}), f'{{"{s}": "{s}"}}')
            self.assertIs(Status(json.loads(json.dumps(s))), s)
            self.assertEqual({s.value: 1}[s], 1)

    def test_worst_wins_in_the_order_the_style_states(self):
        self.assertEqual(ktap.worst(*Status), Status.FAIL)
        self.assertEqual(ktap.worst("pass", "error", "skip"), Status.ERROR)
        self.assertEqual(ktap.worst(), Status.PASS)
        self.assertEqual(ktap.BAD, (Status.ERROR, Status.FAIL))


if __name__ == "__main__":
    unittest.main()
