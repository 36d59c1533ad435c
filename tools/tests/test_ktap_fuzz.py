# SPDX-License-Identifier: MIT
"""A random-corpus property test of the KTAP parser. Real serial logs
(tools/tests/logs/: a clean SMP run, GRUB's escape-painted console, a
kernel-handled crash) are broken the ways a serial line breaks: cut off,
two guests interleaved, random bytes, huge lines, DATA lines whose JSON is
bad. Whatever comes in, the parser must not raise, its report must stay
strict JSON, and what it could not read must show up in the report as a
problem or a crash reason, never vanish silently.

Deterministic: round i draws from random.Random(f"{SEED}-{i}"), and a
failure names the round and the mutation, so `replay(i)` rebuilds the
input."""

import json
import random
import unittest
from pathlib import Path

from tools.lib.analysis import ktap

LOGS = Path(__file__).resolve().parent / "logs"
SEED = 7
ROUNDS = 300
# Long enough that quadratic work on a line would show (minutes), short
# enough for make check.
HUGE = 1 << 18
# Random bytes made printable, so that a huge line stays one line.
_PRINTABLE = bytes(32 + b % 95 for b in range(256))


def load_logs():
    return [p.read_bytes().splitlines(keepends=True)
            for p in sorted(LOGS.glob("*.log"))]


def totals_index(lines):
    return next(i for i, line in enumerate(lines) if b"# Totals:" in line)


def version_index(lines):
    return next(i for i, line in enumerate(lines)
                if line.rstrip().endswith(b"KTAP version 1"))


# Each mutation takes (rng, logs) and returns (lines, expectation), where
# expectation(report) says what the report must admit to, or is None when
# the damage may be harmless (random bytes inside a diagnostic).

def truncate(rng, logs):
    """The guest died, or the cable was pulled: no totals line."""
    lines = rng.choice(logs)
    cut = rng.randrange(totals_index(lines))
    text = b"".join(lines[:cut]) + lines[cut][:rng.randrange(
        len(lines[cut]) + 1)]
    return text.splitlines(keepends=True), lambda r: r.crashed


def interleave(rng, logs):
    """Two guests on one serial console, or a reboot mid-run."""
    a, b = rng.sample(logs, 2)
    a, b, out = list(a), list(b), []
    while a or b:
        src = a if a and (not b or rng.random() < 0.5) else b
        out.append(src.pop(0))
    return out, lambda r: r.crashed or r.problems


def random_bytes(rng, logs):
    """Line noise: a span of random bytes written over the log."""
    text = bytearray(b"".join(rng.choice(logs)))
    at = rng.randrange(len(text))
    n = rng.randrange(1, 200)
    text[at:at + n] = bytes(rng.randrange(256) for _ in range(n))
    return bytes(text).splitlines(keepends=True), None


def garbage_line(rng, logs):
    """A line that is not KTAP at all, between the plan and the totals."""
    lines = list(rng.choice(logs))
    at = rng.randrange(version_index(lines) + 1, totals_index(lines) + 1)
    junk = "".join(chr(rng.randrange(0x21, 0x7f)) for _ in range(40))
    lines.insert(at, ("~" + junk.replace("#", "")).encode() + b"\n")
    return lines, lambda r: any("not KTAP" in p for p in r.problems)


def _huge(rng):
    kind = rng.randrange(6)
    if kind == 0:
        return b"# DATA " + b"[" * HUGE, True
    if kind == 1:
        return b"# DATA {\"test\":\"x\",\"v\":" + b"9" * HUGE + b"}", True
    if kind == 2:
        return b"ok " + b"1" * HUGE + b" name", False
    if kind == 3:
        return b" \t" * (HUGE // 2) + b"ok 1 deep", False
    if kind == 4:
        return b"not ok 1 " + b"# SKIP " * (HUGE // 7), False
    return rng.randbytes(HUGE).translate(_PRINTABLE), False


def huge_line(rng, logs):
    """A guest printing without a newline for a quarter megabyte."""
    lines = list(rng.choice(logs))
    at = rng.randrange(version_index(lines) + 1, totals_index(lines) + 1)
    line, bad_data = _huge(rng)
    lines.insert(at, line + b"\n")
    return lines, (lambda r: any("DATA" in p for p in r.problems)) \
        if bad_data else None


# JSON a DATA line must not be taken from: not JSON, not an object, or a
# value results.json could not hold (non-finite numbers).
_BAD_JSON = [
    lambda s: s[:len(s) // 2],
    lambda s: s.replace("}", "]", 1),
    lambda s: s.replace(":", "", 1),
    lambda s: s[:-1] + ",\"nan\":NaN}",
    lambda s: s[:-1] + ",\"big\":1e999}",
    lambda s: s[:-1] + ",\"neg\":-1e400}",
    lambda s: s[:-1] + ",\"inf\":-Infinity}",
    lambda s: "[" + s + "]",
    lambda s: "\"" + s.replace("\"", "'") + "\"",
    lambda s: s[:-1] + ",\"deep\":" + "[" * 5000 + "]" * 5000 + "}",
    lambda s: s[:-1] + ",\"n\":" + "7" * 5000 + "}",
]


def bad_json(rng, logs):
    """A DATA line whose JSON cannot be used."""
    lines = list(rng.choice([log for log in logs
                             if any(b"# DATA " in line for line in log)]))
    at = rng.choice([i for i, line in enumerate(lines)
                     if b"# DATA " in line])
    head, _, body = lines[at].decode().partition("# DATA ")
    body = rng.choice(_BAD_JSON)(body.rstrip())
    lines[at] = (head + "# DATA " + body + "\n").encode()
    return lines, lambda r: any("DATA" in p for p in r.problems)


MUTATIONS = [truncate, interleave, random_bytes, garbage_line, huge_line,
             bad_json]


def replay(i, logs=None):
    """Round i's mutation name and input lines."""
    rng = random.Random(f"{SEED}-{i}")
    mutation = rng.choice(MUTATIONS)
    lines, expect = mutation(rng, logs or load_logs())
    return mutation.__name__, lines, expect


def parse(lines, as_text):
    parser = ktap.Parser()
    for n, line in enumerate(lines):
        parser.feed(line.decode("utf-8", "replace") if as_text else line,
                    float(n))
    return parser.finish()


class Found(unittest.TestCase):
    """Inputs the rounds below found, kept as plain cases."""

    def test_data_number_beyond_float_range(self):
        # Round 9: 1e999 parsed as float("inf"), which results.json would
        # write as the non-JSON token Infinity.
        for number in ("1e999", "-1e400"):
            report = ktap.parse(["KTAP version 1", "1..1",
                                 f'# DATA {{"test":"t","v":{number}}}',
                                 "ok 1 t",
                                 "# Totals: pass:1 fail:0 skip:0 error:0"])
            self.assertEqual(report.data, [])
            self.assertTrue(any("DATA" in p for p in report.problems))


class KtapFuzz(unittest.TestCase):
    def check_report(self, report, where):
        # results.json is written from these: they must be strict JSON.
        try:
            json.dumps([t.to_json() for t in report.tests], allow_nan=False)
            json.dumps(report.data, allow_nan=False)
            json.dumps(report.problems, allow_nan=False)
        except (TypeError, ValueError) as err:
            self.fail(f"{where}: report is not JSON: {err}")
        self.assertLessEqual(len(report.problems), ktap.MAX_PROBLEMS + 1,
                             where)
        self.assertTrue(report.crashed or report.totals is not None, where)
        for test in report.walk():
            self.assertIn(test.effective_status(), ktap.STATUSES, where)

    def test_real_logs_parse_clean(self):
        """The unmutated logs are read without a problem, so each
        expectation below is caused by its mutation."""
        for lines in load_logs():
            report = parse(lines, as_text=False)
            self.assertEqual(report.problems, [])
            self.assertIsNotNone(report.totals)

    def test_mutated_logs(self):
        logs = load_logs()
        for i in range(ROUNDS):
            name, lines, expect = replay(i, logs)
            where = f"round {i} ({name}; replay({i}) rebuilds it)"
            try:
                report = parse(lines, as_text=i % 2 == 1)
            except Exception as err:  # noqa: BLE001 - any raise is the bug
                self.fail(f"{where}: parser raised {err!r}")
            self.check_report(report, where)
            if expect is not None:
                self.assertTrue(expect(report),
                                f"{where}: damage not reported: "
                                f"{report.problems[:5]}, crash "
                                f"{report.crash_reason!r}")


if __name__ == "__main__":
    unittest.main()
