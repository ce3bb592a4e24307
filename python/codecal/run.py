"""A run directory of `codecal run`, read into pandas DataFrames.

What it reads: `manifest.json`, and every file of `generations/`,
`labels/`, `verdicts/` and `tables/`, each row with the file it came from
(`file`, the model or backend label the run gave it). Nested objects
(`confidence`, `reflective`) become dotted columns (`confidence.average_token_probability`).

Not here: any statistics, or writing. Files are read as they are; a run
still being written is read as far as it got.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Run:
    """One run: its manifest and its rows."""

    path: Path
    manifest: dict
    generations: "object"
    labels: "object"
    verdicts: "object"
    tables: dict = field(default_factory=dict)

    def __repr__(self):
        name = self.manifest.get("config", {}).get("name", "?")
        return (
            f"Run({name!r}: {len(self.generations)} generations, {len(self.labels)} labels, "
            f"{len(self.verdicts)} verdicts, tables {sorted(self.tables)})"
        )


def load_run(path):
    """Reads the run directory `path` (as `codecal run` writes it)."""
    import pandas as pd

    root = Path(path)
    manifest_path = root / "manifest.json"
    if not manifest_path.is_file():
        raise ValueError(f"{root}: no manifest.json; is this a run directory of `codecal run`?")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    return Run(
        path=root,
        manifest=manifest,
        generations=_rows(root / "generations", pd),
        labels=_rows(root / "labels", pd),
        verdicts=_rows(root / "verdicts", pd),
        tables={p.stem: pd.read_csv(p) for p in sorted((root / "tables").glob("*.csv"))},
    )


def _rows(folder, pd):
    frames = []
    for path in sorted(folder.glob("*")):
        if path.suffix == ".jsonl":
            frame = pd.json_normalize(_jsonl(path))
        elif path.suffix == ".csv":
            frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
        else:
            continue
        frames.append(frame.assign(file=path.stem))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _jsonl(path):
    rows = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
    return rows
