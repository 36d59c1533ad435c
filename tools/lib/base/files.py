# SPDX-License-Identifier: MIT
"""The names of the files a batch of runs leaves in its folder, shared by
the launcher that writes them and the readers that find them."""

# A batch's list of its runs, in order (tools/lib/launch/batch.py).
INDEX = "index.json"
