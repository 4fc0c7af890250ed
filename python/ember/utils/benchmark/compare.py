"""Compare: tables of Measurements (rows: sub_label per thread count, columns: description)."""
import collections

from ember.utils.benchmark.common import Measurement, select_unit, trim_sigfig, unit_to_english

__all__ = ["Compare"]

_BEST = "\033[92m\033[1m"   # green, bold
_GOOD = "\033[34m\033[1m"   # blue, bold: within 1.1x of the best
_BAD = "\033[2m\033[91m"    # faint red: 2x slower than the best or worse
_VERY_BAD = "\033[31m\033[1m"
_TERMINATE = "\033[0m\033[0m"


class Compare:
    """Groups results by label into one table each, as torch.utils.benchmark.Compare."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = False
        self._highlight_warnings = False

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of Measurement, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        self._colorize = "rowwise" if rowwise else "columnwise"

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def __str__(self):
        return "\n".join(self._render())

    def _render(self):
        by_label = collections.OrderedDict()
        for m in Measurement.merge(self._results):
            by_label.setdefault(m.task_spec.label, []).append(m)
        out = []
        for label, ms in by_label.items():
            out.append(self._table(label, ms))
        return out

    def _table(self, label, ms):
        columns = list(collections.OrderedDict.fromkeys(m.description for m in ms))
        threads = sorted({m.num_threads for m in ms})
        rows = collections.OrderedDict()  # (threads, sub_label) -> {description: measurement}
        for t in threads:
            for m in ms:
                if m.num_threads == t:
                    rows.setdefault((t, m.sub_label), {})[m.description] = m
        unit, scale = select_unit(min(m.median for m in ms))

        def cell(m, best):
            if m is None:
                return ""
            v = m.median / scale
            figs = m.significant_figures if self._trim_significant_figures else None
            if figs is not None:
                v = trim_sigfig(v, figs)
                digits = max(0, figs - len(str(int(abs(v)))) if abs(v) >= 1 else figs)
                s = f"{v:.{digits}f}"
            else:
                s = f"{v:.1f}"
            if self._highlight_warnings and m.has_warnings:
                s += f" (! {100 * m.iqr / m.median:.0f}%)"
            if self._colorize and best is not None:
                ratio = m.median / best
                color = _BEST if ratio <= 1.0 else _GOOD if ratio <= 1.1 else _VERY_BAD if ratio >= 5 \
                    else _BAD if ratio >= 2 else None
                if color:
                    s = f"{color}{s}{_TERMINATE}"
            return s

        # Best times for colouring: per column (default) or per row.
        best_col = {c: min((r[c].median for r in rows.values() if c in r), default=None) for c in columns}
        grid = []
        for (t, sub), r in rows.items():
            cells = []
            best_row = min(m.median for m in r.values())
            for c in columns:
                best = best_row if self._colorize == "rowwise" else best_col[c]
                cells.append(cell(r.get(c), best))
            grid.append((t, "" if sub is None else str(sub), cells))

        head = ["" if c is None else str(c) for c in columns]
        label_w = max([len(sub) for _, sub, _ in grid] + [0])
        col_w = [max([len(h)] + [len(_strip(cells[i])) for _, _, cells in grid]) + 4 for i, h in enumerate(head)]

        def center(text, w):
            pad = w - len(_strip(text))
            return " " * (pad // 2) + text + " " * (pad - pad // 2)

        header = " " * (label_w + 8) + "|" + "|".join(center(h, w) for h, w in zip(head, col_w))
        width = len(header)
        title = f" {label} " if label else " "
        lines = ["[" + title.center(width - 2, "-") + "]", header]
        last_t = None
        for t, sub, cells in grid:
            if t != last_t:
                prefix = f"{t} threads: "
                lines.append(prefix + "-" * max(width - len(prefix), 0))
                last_t = t
            lines.append(f"      {sub:<{label_w}}  |" + "|".join(center(c, w) for c, w in zip(cells, col_w)))
        lines.append("")
        lines.append(f"Times are in {unit_to_english(unit)}s ({unit}).")
        if self._highlight_warnings and any(m.has_warnings for m in ms):
            lines.append("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.")
        lines.append("")
        return "\n".join(lines)


def _strip(s):
    """s without ANSI colour codes (for widths)."""
    import re
    return re.sub(r"\033\[[0-9;]*m", "", s)
