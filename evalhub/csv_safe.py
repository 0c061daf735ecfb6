"""CSV files a spreadsheet opens without running anything: every CSV EvalHub writes goes
through `writer` or `DictWriter` here (tests/test_ci_guards.py refuses `csv.writer` elsewhere).

A cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to
Excel, LibreOffice and Google Sheets, and its text may come from anyone: a seed
conversation's id, a crowdworker's platform id. OWASP's rule ("CSV injection") is to prefix
such a cell with a single quote, which the spreadsheet shows as text. A Python number (an int
or a float, e.g. -1.5) is data that no spreadsheet runs: it is written as it is, so that
numeric columns stay numeric; only strings are neutralised. The header row is cells too.

Kept here rather than taken from `defusedcsv`: that package leaves number-looking strings
alone and does not cover the tab and carriage return, where OWASP's rule (and ours) does.
"""

import csv

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value):
    """`value` as a cell no spreadsheet evaluates: a string starting a formula gets a
    leading single quote; numbers and everything else are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class _SafeWriter:
    def __init__(self, inner):
        self._inner = inner

    def writerow(self, row):
        return self._inner.writerow([neutralise(cell) for cell in row])

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)

    @property
    def dialect(self):
        return self._inner.dialect


def writer(stream, *args, **kwargs):
    """`csv.writer` whose cells are neutralised."""
    return _SafeWriter(csv.writer(stream, *args, **kwargs))


class DictWriter(csv.DictWriter):
    """`csv.DictWriter` whose cells, header included, are neutralised."""

    def writeheader(self):
        return self.writer.writerow([neutralise(name) for name in self.fieldnames])

    def writerow(self, rowdict):
        return super().writerow({key: neutralise(value) for key, value in rowdict.items()})

    def writerows(self, rowdicts):
        for rowdict in rowdicts:
            self.writerow(rowdict)
