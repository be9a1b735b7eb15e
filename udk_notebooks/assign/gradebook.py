"""The gradebook of one assignment: results merged across runs, rosters, LMS exports, hand-graded scores.

:func:`udk_notebooks.assign.grade.grade_folder` keeps ``OUT/gradebook.json``:
one row per submission file, keyed by its path below the submissions folder
without the suffix (``alice``, or ``section_a/alice``: the same name in two
section folders gives two rows, reported). Grading again merges: a file graded
again replaces its own row and says so in the log (``OUT/grading.log``);
every other row stays. Each row records the file, its SHA-256, when it was
graded, the student it belongs to (from a roster), the points per question,
the total and the status of the run.

A roster (CSV) maps file names to students. Columns: ``id`` (required: the
student's SIS id / student number), and any of ``name``, ``login`` (LMS user
name), ``email``, ``lms_id`` (the LMS's numeric user id), ``section``,
``files`` (file names without suffix, separated by ``;``). A submission's
name matches a student when it equals one of their ``files``, their ``id``,
``login`` or the part of ``email`` before the ``@``, or when it follows an
LMS bulk download's ``name_id_subid_file`` pattern (Canvas:
``doejane_LATE_12345_67890_ps1.ipynb``) with ``id`` equal to their ``lms_id``.

:func:`export` writes CSV files to import into Canvas (a points column with
the SIS and login ids), Gradescope, Moodle (user name) or a plain CSV with
everything. :func:`merge_manual` adds the points of a question graded by hand.
"""

from __future__ import annotations

import csv
import datetime
import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["EXPORT_FORMATS", "Gradebook", "RosterEntry", "drop_row", "export", "match_student", "merge_manual",
           "read_roster"]

LMS_DOWNLOAD = re.compile(r"^(?P<name>[^_]+?)(?:_late)?_(?P<lms_id>\d+)_(?P<submission_id>\d+)_(?P<file>.+)$",
                          re.IGNORECASE)
"""An LMS bulk download's file name: ``name[_LATE]_userid_submissionid_originalname``."""

EXPORT_FORMATS = ("canvas", "gradescope", "moodle", "csv")


@dataclass(frozen=True)
class RosterEntry:
    """One student of a roster file (see the module docstring for the columns)."""

    id: str
    name: str = ""
    login: str = ""
    email: str = ""
    lms_id: str = ""
    section: str = ""
    files: tuple[str, ...] = ()


def read_roster(path: str | Path) -> list[RosterEntry]:
    """Read a roster CSV (columns ``id`` and optionally ``name, login, email, lms_id, section, files``).

    Raises
    ------
    ValueError
        Without an ``id`` column, for an empty or repeated id, or when two
        students claim the same file name.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"`roster` {str(path)!r} does not exist: give a CSV with an `id` column")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        columns = [c.strip().lower() for c in reader.fieldnames or []]
        if "id" not in columns:
            raise ValueError(f"`roster` {path.name} needs an `id` column; it has {', '.join(columns) or 'none'}")
        entries, seen, owners = [], set(), {}
        for number, raw in enumerate(reader, start=2):
            row = {k.strip().lower(): (v or "").strip() for k, v in raw.items() if k}
            if not row.get("id"):
                raise ValueError(f"`roster` {path.name} line {number}: the `id` is empty")
            if row["id"] in seen:
                raise ValueError(f"`roster` {path.name} line {number}: id {row['id']!r} appears twice")
            seen.add(row["id"])
            files = tuple(f.strip() for f in row.get("files", "").split(";") if f.strip())
            for name in files:
                if name in owners:
                    raise ValueError(f"`roster` {path.name}: file {name!r} belongs to {owners[name]!r} and "
                                     f"{row['id']!r}")
                owners[name] = row["id"]
            entries.append(RosterEntry(row["id"], row.get("name", ""), row.get("login", ""), row.get("email", ""),
                                       row.get("lms_id", ""), row.get("section", ""), files))
    return entries


def match_student(stem: str, roster: list[RosterEntry]) -> RosterEntry | None:
    """The roster entry a submission's file name (without suffix) belongs to, or None."""
    for entry in roster:
        names = {entry.id, entry.login, entry.email.split("@")[0], *entry.files} - {""}
        if stem in names:
            return entry
    lms = LMS_DOWNLOAD.match(stem)
    if lms:
        for entry in roster:
            if entry.lms_id and entry.lms_id == lms.group("lms_id"):
                return entry
    return None


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Gradebook:
    """``OUT/gradebook.json`` of one assignment: load, record rows (merging), save, write ``scores.csv``.

    Parameters
    ----------
    out : str or Path
        The output folder.
    spec : dict
        The autograder spec (its name and questions). A gradebook of another
        assignment in the same folder is refused.
    """

    def __init__(self, out: str | Path, spec: dict):
        self.out = Path(out)
        self.path = self.out / "gradebook.json"
        self.questions = [{"name": q["name"], "points": float(q["points"]), "manual": bool(q["manual"])}
                          for q in spec["questions"]]
        self.assignment = spec["name"]
        if self.path.is_file():
            data = json.loads(self.path.read_text())
            if data.get("assignment") != self.assignment:
                raise ValueError(f"`out` {str(self.out)!r} holds the gradebook of {data.get('assignment')!r}, "
                                 f"not {self.assignment!r}: grade each assignment into its own folder")
            self.rows: dict[str, dict] = data["rows"]
        else:
            self.rows = {}
        self.new_log: list[str] = []

    @property
    def max_score(self) -> float:
        """Every question's points, those graded by hand included."""
        return float(sum(q["points"] for q in self.questions))

    def log(self, line: str) -> None:
        self.new_log.append(f"{_now()} {line}")

    def record(self, key: str, row: dict) -> None:
        """Put ``row`` under ``key``; replacing a row keeps its hand-graded points and logs the change."""
        old = self.rows.get(key)
        if old is not None:
            for name, points in old.get("manual", {}).items():
                row.setdefault("manual", {})[name] = points
            same = "same file" if old.get("sha256") == row.get("sha256") else "changed file"
            self.log(f"regraded {key}: total {old['total']:g} -> {self._total(row):g} ({same}, sha256 "
                     f"{row.get('sha256', '')[:12]})")
        row["total"] = self._total(row)
        self.rows[key] = row

    def _total(self, row: dict) -> float:
        automatic = sum(v for v in row["questions"].values() if v is not None)
        return round(automatic + sum(row.get("manual", {}).values()), 10)

    def save(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        data = {"format": "udk-gradebook/1", "assignment": self.assignment, "questions": self.questions,
                "max_score": self.max_score, "rows": dict(sorted(self.rows.items()))}
        temporary = self.path.with_suffix(".json.part")
        temporary.write_text(json.dumps(data, indent=1) + "\n")
        temporary.replace(self.path)
        if self.new_log:
            with (self.out / "grading.log").open("a") as handle:
                handle.write("\n".join(self.new_log) + "\n")
            self.new_log = []
        self.write_scores()

    def score_of(self, row: dict, question: str):
        manual = row.get("manual", {})
        return manual.get(question, row["questions"].get(question))

    def write_scores(self) -> Path:
        """``scores.csv``: student (the row's key), one column per question, total, max_score, status."""
        names = [q["name"] for q in self.questions]
        table = self.out / "scores.csv"
        with table.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["student", *names, "total", "max_score", "status"])
            for key, row in sorted(self.rows.items()):
                scores = [self.score_of(row, n) for n in names]
                writer.writerow([key, *["" if s is None else f"{s:g}" for s in scores], f"{row['total']:g}",
                                 f"{self.max_score:g}", row["status"]])
        return table


def _duplicates(book: Gradebook) -> dict[str, list[str]]:
    by_student: dict[str, list[str]] = {}
    for key, row in book.rows.items():
        if row.get("student_id"):
            by_student.setdefault(row["student_id"], []).append(key)
    return {sid: keys for sid, keys in by_student.items() if len(keys) > 1}


def export(out: str | Path, spec: dict, fmt: str, dest: str | Path, roster: str | Path | None = None) -> Path:
    """Write the gradebook of ``out`` as a CSV to import into an LMS.

    Parameters
    ----------
    out : str or Path
        The grading output folder (holding ``gradebook.json``).
    spec : dict
        The autograder spec.
    fmt : {"canvas", "gradescope", "moodle", "csv"}
        ``canvas``: Student, ID, SIS User ID, SIS Login ID, Section and a
        points column named after the assignment, with a "Points Possible"
        row; ``gradescope``: Name, SID, Email and the points; ``moodle``:
        Username, Email address, ID number and the points; ``csv``: every
        field of every row.
    dest : str or Path
        The CSV file written.
    roster : str or Path, optional
        A roster (:func:`read_roster`) matched again to the file names (else
        the students matched when grading). The LMS formats need it: a row
        with no student is refused, not dropped.

    Raises
    ------
    ValueError
        For an unknown format, a row without a student (LMS formats), or a
        student with two submissions (drop one with :func:`drop_row`).
    """
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"`fmt` must be one of {', '.join(EXPORT_FORMATS)}; got {fmt!r}")
    book = Gradebook(out, spec)
    if not book.rows:
        raise ValueError(f"`out` {str(out)!r} has no graded submissions to export")
    if roster is not None:
        entries = read_roster(roster)
        for key, row in book.rows.items():
            _attach(row, match_student(Path(key).name, entries))
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    names = [q["name"] for q in book.questions]
    if fmt == "csv":
        with dest.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["key", "student_id", "name", "login", "email", "section", *names, "total", "max_score",
                             "status", "file", "sha256", "submitted_at", "graded_at"])
            for key, row in sorted(book.rows.items()):
                scores = [book.score_of(row, n) for n in names]
                writer.writerow([key, *(row.get(f, "") for f in ("student_id", "name", "login", "email", "section")),
                                 *["" if s is None else f"{s:g}" for s in scores], f"{row['total']:g}",
                                 f"{book.max_score:g}", row["status"], row["file"], row["sha256"],
                                 row.get("submitted_at", ""), row["graded_at"]])
        return dest
    unmatched = sorted(key for key, row in book.rows.items() if not row.get("student_id"))
    if unmatched:
        raise ValueError(f"no roster student for {', '.join(unmatched)}: give a `roster` whose `files`, id, login "
                         f"or lms_id match these file names")
    duplicates = _duplicates(book)
    if duplicates:
        listed = "; ".join(f"{sid}: {', '.join(keys)}" for sid, keys in sorted(duplicates.items()))
        raise ValueError(f"students with more than one graded submission ({listed}): drop the ones that do not "
                         f"count (python -m udk_notebooks.assign drop OUT KEY) and export again")
    column = book.assignment
    rows = sorted(book.rows.values(), key=lambda r: r["student_id"])
    with dest.open("w", newline="") as handle:
        writer = csv.writer(handle)
        if fmt == "canvas":
            writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", column])
            writer.writerow(["Points Possible", "", "", "", "", f"{book.max_score:g}"])
            for r in rows:
                writer.writerow([r.get("name", ""), r.get("lms_id", ""), r["student_id"], r.get("login", ""),
                                 r.get("section", ""), f"{r['total']:g}"])
        elif fmt == "gradescope":
            writer.writerow(["Name", "SID", "Email", column])
            for r in rows:
                writer.writerow([r.get("name", ""), r["student_id"], r.get("email", ""), f"{r['total']:g}"])
        else:
            writer.writerow(["Username", "Email address", "ID number", column])
            for r in rows:
                writer.writerow([r.get("login", ""), r.get("email", ""), r["student_id"], f"{r['total']:g}"])
    return dest


def _attach(row: dict, entry: RosterEntry | None) -> None:
    """Write a roster entry's fields into a row (or clear them)."""
    fields = {"student_id": "id", "name": "name", "login": "login", "email": "email", "lms_id": "lms_id",
              "section": "section"}
    for field, attribute in fields.items():
        row[field] = getattr(entry, attribute) if entry is not None else ""


def drop_row(out: str | Path, spec: dict, key: str) -> None:
    """Remove one submission's row from the gradebook (logged)."""
    book = Gradebook(out, spec)
    if key not in book.rows:
        raise ValueError(f"`key` {key!r} is not in the gradebook; it holds {', '.join(sorted(book.rows))}")
    row = book.rows.pop(key)
    book.log(f"dropped {key} (total {row['total']:g}, sha256 {row['sha256'][:12]})")
    book.save()


def merge_manual(out: str | Path, spec: dict, question: str, scores: str | Path) -> int:
    """Add the points of a question graded by hand to the gradebook and to each student's feedback.

    Parameters
    ----------
    out : str or Path
        The grading output folder.
    spec : dict
        The autograder spec.
    question : str
        A question with ``manual: true``.
    scores : str or Path
        A CSV with columns ``student`` (the gradebook key, as in
        ``OUT/manual/<question>.csv``) and ``score`` (blank: not graded yet).

    Returns
    -------
    int
        Rows updated.
    """
    from .feedback import write_feedback

    book = Gradebook(out, spec)
    manual = {q["name"]: q for q in book.questions if q["manual"]}
    if question not in manual:
        raise ValueError(f"`question` must be one graded by hand ({', '.join(manual) or 'none here'}); "
                         f"got {question!r}")
    points = manual[question]["points"]
    updates = {}
    with Path(scores).open(newline="") as handle:
        for number, row in enumerate(csv.DictReader(handle), start=2):
            key, text = (row.get("student") or "").strip(), (row.get("score") or "").strip()
            if not text:
                continue
            if key not in book.rows:
                raise ValueError(f"`scores` line {number}: {key!r} is not in the gradebook")
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"`scores` line {number}: score {text!r} is not a number") from None
            if not 0 <= value <= points:
                raise ValueError(f"`scores` line {number}: score {value:g} is outside 0..{points:g} for {question}")
            updates[key] = value
    for key, value in updates.items():
        row = book.rows[key]
        old = row.setdefault("manual", {}).get(question)
        row["manual"][question] = value
        row["total"] = book._total(row)
        book.log(f"manual {question} for {key}: {'-' if old is None else f'{old:g}'} -> {value:g}")
        feedback_file = book.out / f"{key}.json"
        if feedback_file.is_file():
            feedback = json.loads(feedback_file.read_text())
            for q in feedback["questions"]:
                if q["name"] == question:
                    q["score"] = value
            feedback["score"] = round(sum(q["score"] or 0.0 for q in feedback["questions"]), 10)
            feedback_file.write_text(json.dumps(feedback, indent=1))
            write_feedback(feedback, book.out / key, spec, row.get("name") or None)
    book.save()
    return len(updates)
