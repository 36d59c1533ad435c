# SPDX-License-Identifier: MIT
"""bench's own library: the Linux reference kernel (linuxref) and the
side-by-side table (sidebyside), and the options of the commands that
boot both on one machine (options)."""
