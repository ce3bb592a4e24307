"""Tests of turbulence/instances.py (issue "fidelity, third pass", item 8):
every instance of a new-seed neighbourhood has distinct, valid parameters
(the Turbulence paper, §IV-C), and a question whose parameter space cannot
give that many is refused by name instead of repeating rows.

Run: python3 turbulence/test_instances.py (the sandbox's Python, for the
numpy that one oracle needs; the real-data test is skipped, saying why,
where the Turbulence data is absent, and fails instead under
CODECAL_REQUIRE_DATA).
"""
import json
import os
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import instances  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "turbulence"


class SmallOracle:
    """Parameters from {0, 1, 2}; 1 is invalid."""

    FUNCTION = "f"

    @staticmethod
    def valid(row):
        return row in ([0], [2])

    @staticmethod
    def random_params(rng):
        return [rng.randrange(3)]


class NeighbourhoodTests(unittest.TestCase):
    def folder(self, manual):
        folder = pathlib.Path(tempfile.mkdtemp())
        (folder / "question.txt.template").write_text("Take $0.")
        if manual is not None:
            (folder / "manually_chosen_params.txt").write_text(manual)
        return folder

    def test_a_small_parameter_space_is_refused_not_repeated(self):
        folder = self.folder(None)
        with self.assertRaises(instances.CannotDraw) as caught:
            instances.neighbourhood(7, folder, "2", 5, SmallOracle)
        self.assertIn("Q7: only 2 distinct valid parameter rows", str(caught.exception))

    def test_hand_picked_duplicates_and_invalid_rows_count_once_or_not_at_all(self):
        folder = self.folder("2\n2\n1\n0\n")
        rows = instances.neighbourhood(7, folder, "2", 2, SmallOracle)
        params = sorted(json.dumps(r["params"]) for r in rows)
        self.assertEqual(params, ["[0]", "[2]"])
        self.assertEqual([r["prompt"] for r in rows if r["params"] == [2]], ["Take 2."])

    def test_every_question_of_a_new_seed_has_100_distinct_valid_rows(self):
        if not DATA.exists():
            message = f"skipped: no Turbulence data at {DATA}"
            if os.environ.get("CODECAL_REQUIRE_DATA"):
                self.fail(message)
            print(message)
            return
        from selftest import load

        for question in range(1, 61):
            folder = DATA / "questions" / f"Q{question}"
            oracle = load(question)
            rows = instances.neighbourhood(question, folder, "2", 100, oracle)
            keys = {json.dumps(r["params"]) for r in rows}
            self.assertEqual(len(keys), 100, f"Q{question}")
            self.assertTrue(all(oracle.valid(r["params"]) for r in rows), f"Q{question}")


if __name__ == "__main__":
    unittest.main()
