# SPDX-License-Identifier: MIT
"""Reading what runs said: the KTAP parser (ktap), what a run means
(results), sets of result documents (resultset), named figures
(figures), the report table (report), two sets side by side
(comparison), what was not exercised (coverage), statistics (stats),
tables (table), plot data (plotdata), and second readers of the same
logs: Linux's kunit.py (kunit) and a LAVA job's log (lavalog)."""
