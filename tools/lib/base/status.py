# SPDX-License-Identifier: MIT
"""A test's or a check's status, one spelling for every tool: pass, skip,
error (our bug or a broken environment) and fail (the hypervisor
misbehaving). A StrEnum, so that a status is still its word: equal to it,
written as it to JSON and in f-strings, and equal to one read back."""

import enum


class Status(enum.StrEnum):
    PASS = "pass"
    SKIP = "skip"
    ERROR = "error"
    FAIL = "fail"
