"""Feedback a student can read: one Markdown and one HTML report per graded submission.

Each report gives the score, then per question its points, every test's
outcome with its message (public tests say which line failed; hidden tests
give only their message, never their code) and the student's own answer
values as the grader saw them. Questions graded by hand show their points
once :func:`udk_notebooks.assign.gradebook.merge_manual` has them.

The reports are made from the grader's feedback dict
(:func:`udk_notebooks.assign.grade.grade_notebook`) only: what reaches them is
what the sandboxed run returned and the tests' messages, nothing of the
grader's own environment.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np

from .answers import Unsupported, decode

__all__ = ["feedback_html", "feedback_markdown", "show_answer", "write_feedback"]

ANSWER_CHARS = 600
"""Characters of one answer value shown in a report."""


def show_answer(tagged) -> str:
    """A short, readable text of a tagged answer value (:func:`~.answers.encode`)."""
    try:
        value = decode(tagged)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return "(could not be read)"
    if isinstance(value, Unsupported):
        return f"(not usable: {value.reason})"
    if value is Ellipsis:
        return "... (not answered)"
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=60, edgeitems=3, precision=6)
        text = f"array of shape {value.shape}:\n{text}"
    else:
        with np.printoptions(threshold=60, edgeitems=3, precision=6):
            text = repr(value)
    return text if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS] + " ..."


def _fenced(text: str, indent: str = "") -> list[str]:
    """``text`` as a Markdown code block whose fence no line of it can close.

    The text may be the student's (an exception's message, an answer): a fence
    longer than its longest run of backticks keeps it inert, so it cannot add
    headings, a score line or HTML to the report (CommonMark closes a fence
    only with one at least as long).
    """
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{indent}{fence}", *[f"{indent}{line}" for line in text.splitlines()], f"{indent}{fence}"]


def _points(value) -> str:
    return "-" if value is None else f"{value:g}"


def _worth(points: float) -> str:
    return f"{points:g} point" + ("" if points == 1 else "s")


def _question_answers(feedback: dict, spec: dict | None) -> dict[str, list[str]]:
    names = {q["name"]: q.get("answers", []) for q in (spec or {}).get("questions", [])}
    return {q["name"]: names.get(q["name"], []) for q in feedback["questions"]}


def _status_lines(feedback: dict) -> list[str]:
    execution = feedback.get("execution") or {}
    lines = [f"cell {e['cell']} raised {e['error']}" for e in execution.get("cell_errors", [])]
    lines += [f"cell {c} ran past its time limit and was skipped" for c in execution.get("timed_out_cells", [])]
    lines += [f"the kernel died in cell {c}; the cell was skipped" for c in execution.get("kernel_died_in_cells", [])]
    if execution.get("out_of_time"):
        lines.append("the notebook ran out of time; later cells did not run")
    if feedback.get("error"):
        lines.append(str(feedback["error"]))
    return lines


def _total_line(feedback: dict) -> str:
    if "auto_max_score" in feedback:  # max_score counts the questions graded by hand already
        maximum = feedback["max_score"]
    else:
        maximum = feedback["max_score"] + (feedback.get("manual_points") or 0.0)
    line = f"{feedback['score']:g} of {_worth(maximum)}"
    pending = [q for q in feedback["questions"] if q.get("manual") and q["score"] is None]
    if pending:
        line += f" ({_worth(sum(q['max_score'] for q in pending))} of questions graded by hand still to come)"
    return line


def feedback_markdown(feedback: dict, spec: dict | None = None, student: str | None = None) -> str:
    """The report as Markdown.

    Parameters
    ----------
    feedback : dict
        From :func:`~udk_notebooks.assign.grade.grade_notebook`.
    spec : dict, optional
        The autograder spec (to list each question's answer names).
    student : str, optional
        The name shown at the top (default: the submission's file name).
    """
    if not isinstance(feedback, dict) or "questions" not in feedback:
        raise ValueError("`feedback` must be the dict grade_notebook returns")
    answers = feedback.get("answers", {})
    lines = [f"# {feedback['assignment']}: feedback for {student or feedback['submission']}", "",
             f"**Score: {_total_line(feedback)}**", ""]
    status = _status_lines(feedback)
    if status:
        lines += ["While your notebook ran:", ""] + _fenced("\n".join(status)) + [""]
    for q in feedback["questions"]:
        lines += [f"## {q['name']}: {_points(q['score'])} of {q['max_score']:g}", ""]
        if q.get("manual"):
            lines += ["Graded by hand.", ""]
        for number, t in enumerate(q["tests"], start=1):
            kind = "hidden" if t["hidden"] else "public"
            mark = "passed" if t["passed"] else "failed"
            lines.append(f"- {kind} test {number} ({_worth(t['points'])}): {mark}")
            if t["message"]:
                lines += ["", *_fenced(t["message"], "  ")]
        names = _question_answers(feedback, spec)[q["name"]]
        if names:
            lines += ["", "Your answers:", ""]
            for name in names:
                shown = show_answer(answers[name]) if name in answers else "(not defined)"
                lines += [f"- `{name}` =", "", *_fenced(shown, "  ")]
        lines.append("")
    return "\n".join(lines)


def feedback_html(feedback: dict, spec: dict | None = None, student: str | None = None) -> str:
    """The report as a self-contained HTML page (every text escaped); arguments as :func:`feedback_markdown`."""
    if not isinstance(feedback, dict) or "questions" not in feedback:
        raise ValueError("`feedback` must be the dict grade_notebook returns")
    e = html.escape
    answers = feedback.get("answers", {})
    title = f"{feedback['assignment']}: feedback for {student or feedback['submission']}"
    parts = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>{e(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto}"
             "pre{background:#f4f4f4;padding:.5em;overflow-x:auto}.passed{color:#1a7f37}.failed{color:#b42318}"
             "td,th{padding:.2em .6em;text-align:left;vertical-align:top}</style></head><body>",
             f"<h1>{e(title)}</h1>", f"<p><strong>Score: {e(_total_line(feedback))}</strong></p>"]
    status = _status_lines(feedback)
    if status:
        parts += ["<p>While your notebook ran:</p><ul>"] + [f"<li>{e(line)}</li>" for line in status] + ["</ul>"]
    for q in feedback["questions"]:
        parts.append(f"<h2>{e(q['name'])}: {e(_points(q['score']))} of {q['max_score']:g}</h2>")
        if q.get("manual"):
            parts.append("<p>Graded by hand.</p>")
        if q["tests"]:
            parts.append("<table><tr><th>test</th><th>points</th><th>result</th><th>message</th></tr>")
            for number, t in enumerate(q["tests"], start=1):
                kind = "hidden" if t["hidden"] else "public"
                mark = "passed" if t["passed"] else "failed"
                message = f"<pre>{e(t['message'])}</pre>" if t["message"] else ""
                parts.append(f"<tr><td>{kind} test {number}</td><td>{t['points']:g}</td>"
                             f"<td class='{mark}'>{mark}</td><td>{message}</td></tr>")
            parts.append("</table>")
        names = _question_answers(feedback, spec)[q["name"]]
        if names:
            parts.append("<p>Your answers:</p><ul>")
            for name in names:
                shown = show_answer(answers[name]) if name in answers else "(not defined)"
                parts.append(f"<li><code>{e(name)}</code> = <pre>{e(shown)}</pre></li>")
            parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_feedback(feedback: dict, stem: str | Path, spec: dict | None = None, student: str | None = None) -> None:
    """Write ``<stem>.md`` and ``<stem>.html`` (folders created as needed)."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_name(stem.name + ".md").write_text(feedback_markdown(feedback, spec, student))
    stem.with_name(stem.name + ".html").write_text(feedback_html(feedback, spec, student))
