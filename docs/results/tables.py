"""The book's results tables, generated from committed run records.

A run record is a directory `docs/results/runs/<name>/` holding what a finished
`codecal run` wrote that says what it found and what made it: `report.json`,
`manifest.json` (the config as parsed, each stage's input hash, the model
files' sha256), the config file as `config.toml`, and `record.json` (the
config's path in the repository, the machine, the command). No cache, no model,
and no item texts: `archive` drops report.json's `items` (the data set's code,
the prompts and the answers), keeping its tables and per-cell numbers.

A page under `docs/src/` asks for a table of a record between two markers:

    <!-- record: cruxeval-output-qwen-oyster table: oyster -->
    ...generated...
    <!-- /record -->

optionally with `columns: model,ECE,PS` (a subset, in that order; separated by
`;` instead where a name holds a comma) and
`rows: measure=oyster-intrinsic|oyster-reassess` (rows whose column holds one of
the values). Between the markers this script writes a line naming the run (model,
file hash, config, date, machine) and the table as the run's report.json holds
it, cells unchanged. Several records joined by `+` (`record: a+b table: outcomes`)
give one table: a caption line per run, and their rows stacked under a first
column `run` that names each row's record.

    python3 docs/results/tables.py            # check: exit 1 naming page and line where a page disagrees
    python3 docs/results/tables.py --write    # rewrite the pages from the records
    python3 docs/results/tables.py archive RUN_DIR --config configs/X.toml

`archive` names the machine it runs on, read from /proc/cpuinfo and /proc/meminfo
(`--machine` overrides it): a run is archived where it finished.

`.ci/run` runs the check.
"""

import argparse
import json
import os
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!-- record: (?P<spec>.*?) -->$")
END = "<!-- /record -->"


def fail(message):
    print(f"tables.py: {message}", file=sys.stderr)
    sys.exit(1)


def load_record(records, name, where):
    folder = records / name
    try:
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        record = json.loads((folder / "record.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        fail(f"{where}: run record {name}: {e}")
    return report, record


def parse_spec(spec, where):
    """`name table: file [columns: a,b] [rows: col=v1|v2]` as a dict."""
    parts = re.split(r"\s+(table|columns|rows):\s+", " " + spec.strip())
    # re.split with a group gives ['', key?...]; the first chunk is the name.
    head = parts[0].strip()
    fields = {"name": head}
    for key, value in zip(parts[1::2], parts[2::2]):
        fields[key] = value.strip()
    if not fields["name"] or "table" not in fields:
        fail(f"{where}: a record marker needs `record: NAME table: FILE`")
    return fields


def model_hash(report, model):
    """The sha256 of the model file behind a report's model label, where known."""
    for name, digest in report["header"]["hashes"]:
        # The label spells the model as its card does (SmolLM2-135M-...),
        # the install folder in lower case.
        stem = name.split("/")[0].lower()
        if stem and stem in model.lower() and name.endswith(".gguf"):
            return digest
    return None


def caption(report, record):
    header = report["header"]
    models = []
    for model in header["models"]:
        digest = model_hash(report, model)
        models.append(f"{model} (sha256 {digest[:12]}…)" if digest else model)
    return (f"*Run record `{header['name']}`: {', '.join(models) or 'no model'}; "
            f"config `{record['config']}`; {header['items']} items; "
            f"created {header['created']}; {record['machine']}.*")


def select(report, fields, where):
    """The header and rows of the record's asked-for table, filtered as the marker says."""
    tables = {t["file"]: t for t in report["tables"]}
    table = tables.get(fields["table"])
    if table is None:
        fail(f"{where}: run record {report['header']['name']} has no table "
             f"{fields['table']!r} (it has: {', '.join(tables)})")
    header, rows = table["header"], table["rows"]
    if "rows" in fields:
        column, _, values = fields["rows"].partition("=")
        if column not in header:
            fail(f"{where}: rows: no column {column!r} in {fields['table']}")
        keep = set(values.split("|"))
        rows = [row for row in rows if row[header.index(column)] in keep]
    if "columns" in fields:
        # `;` separates names that hold a comma ("its ECE, base").
        separator = ";" if ";" in fields["columns"] else ","
        wanted = [c.strip() for c in fields["columns"].split(separator)]
        missing = [c for c in wanted if c not in header]
        if missing:
            fail(f"{where}: columns: {fields['table']} has no {', '.join(missing)}")
        index = [header.index(c) for c in wanted]
        header = wanted
        rows = [[row[i] for i in index] for row in rows]
    return header, rows


def render(runs, fields, where):
    """The caption lines and the table of one record, or of several stacked."""
    captions, header, rows = [], None, []
    for name, (report, record) in runs:
        captions.append(caption(report, record))
        this_header, this_rows = select(report, fields, where)
        if len(runs) > 1:
            this_header = ["run"] + this_header
            this_rows = [[name] + row for row in this_rows]
        if header is not None and this_header != header:
            fail(f"{where}: run record {name}'s {fields['table']} has columns "
                 f"{this_header}, not {header}")
        header = this_header
        rows += this_rows
    lines = captions + [""]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return lines


def generate(page, records, root):
    """The page's text with every record block regenerated."""
    lines = page.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        match = MARKER.match(line.strip())
        i += 1
        if not match:
            continue
        where = f"{page.relative_to(root)}:{i}"
        end = next((j for j in range(i, len(lines)) if lines[j].strip() == END), None)
        if end is None:
            fail(f"{where}: no {END} after the marker")
        fields = parse_spec(match.group("spec"), where)
        runs = [(name, load_record(records, name, where)) for name in fields["name"].split("+")]
        out += render(runs, fields, where)
        out.append(END)
        i = end + 1
    return "\n".join(out)


def pages(root):
    return sorted((root / "docs/src").rglob("*.md"))


def check(root, records, write):
    bad = 0
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        if "<!-- record:" not in text:
            continue
        regenerated = generate(page, records, root)
        if regenerated == text:
            continue
        if write:
            page.write_text(regenerated, encoding="utf-8")
            print(f"tables.py: wrote {page.relative_to(root)}")
            continue
        old, new = text.split("\n"), regenerated.split("\n")
        first = next((k for k, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        owner = next((m.group("spec") for m in (MARKER.match(l.strip()) for l in old[:first][::-1]) if m), "?")
        print(f"tables.py: {page.relative_to(root)}:{first + 1}: disagrees with its run record "
              f"({owner}); run `python3 docs/results/tables.py --write`", file=sys.stderr)
        bad += 1
    return bad


def this_machine():
    """This machine in words: cores, CPU model, widest x86 vectors, memory, GPU."""
    cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    fields = dict(line.split(":", 1) for line in cpuinfo.splitlines() if ":" in line)
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    flags = set(fields.get("flags", "").split())
    vectors = ("AVX-512" if "avx512f" in flags else "AVX2, no AVX-512" if "avx2" in flags
               else "no AVX2")
    cores = os.cpu_count()
    meminfo = Path("/proc/meminfo").read_text(encoding="utf-8").split()
    gigabytes = round(int(meminfo[meminfo.index("MemTotal:") + 1]) / 2**20)
    gpu = "a GPU" if Path("/dev/nvidia0").exists() else "no GPU"
    return (f"{cores}-core {fields.get('model name', 'unknown CPU')} ({vectors}), "
            f"{gigabytes} GB, {gpu}")


def archive(args):
    run = Path(args.run)
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    folder = Path(args.records) / report["header"]["name"]
    folder.mkdir(parents=True, exist_ok=True)
    # Each item's texts are the data set's code, the prompts and the answers:
    # data, which is never committed. The tables and cells stay.
    report.pop("items", None)
    (folder / "report.json").write_text(
        json.dumps(report, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    shutil.copyfile(run / "manifest.json", folder / "manifest.json")
    shutil.copyfile(ROOT / args.config, folder / "config.toml")
    record = {"config": args.config, "machine": args.machine or this_machine(),
              "command": args.command
              or f"codecal run --config {args.config}"}
    (folder / "record.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"tables.py: archived {run} as {folder}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the pages from the records")
    parser.add_argument("--root", default=str(ROOT), help="the repository (a copy, in tests)")
    sub = parser.add_subparsers(dest="command_name")
    arc = sub.add_parser("archive", help="copy a finished run's record into docs/results/runs/")
    arc.add_argument("run")
    arc.add_argument("--config", required=True, help="the config's path in the repository")
    arc.add_argument("--machine", default=None, help="default: this machine, detected")
    arc.add_argument("--command", default=None)
    arc.add_argument("--records", default=str(ROOT / "docs/results/runs"))
    args = parser.parse_args()
    if args.command_name == "archive":
        archive(args)
        return
    root = Path(args.root).resolve()
    bad = check(root, root / "docs/results/runs", args.write)
    if bad:
        sys.exit(1)
    print("tables.py: every record table agrees with its run record")


if __name__ == "__main__":
    main()
