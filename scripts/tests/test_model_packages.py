"""Tests of scripts/model_packages.sh, the Debian packages of the models that scripts/setup.sh installs."""
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "model_packages.sh"


def packages_of(*texts) -> list[str]:
    """model_packages.sh's lines on one model.cmake per text."""
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for index, text in enumerate(texts):
            path = Path(folder) / f"m{index}" / "model.cmake"
            path.parent.mkdir()
            path.write_text(text)
            files.append(str(path))
        result = subprocess.run(["bash", str(SCRIPT), *files], capture_output=True, text=True, check=True)
    return result.stdout.splitlines()


class ModelPackages(unittest.TestCase):
    def test_the_words_after_packages_up_to_the_next_keyword_or_the_end_of_the_call(self):
        self.assertEqual(packages_of(
            'option(NBODY_ENABLE_A "PACKAGES not-this" ON)\n'
            '# PACKAGES (scripts/setup.sh): a comment names none\n'
            'nbody_register_model(NAME a TITLE "A (x)" IN_BUILD ${NBODY_WITH_A} STATUS "on (PACKAGES nope)"\n'
            '                     PACKAGES libfoo-dev g++-12 # a comment after them\n'
            '                     REPORT_ORDER 5)\n'
            'message(STATUS "PACKAGES after the call")\n'), ["g++-12", "libfoo-dev"])
        self.assertEqual(packages_of('nbody_register_model(NAME b STATUS "on" REPORT_ORDER 1 PACKAGES libbar1)\n'), ["libbar1"])

    def test_every_model_once_sorted_and_none_without_packages(self):
        self.assertEqual(packages_of('nbody_register_model(NAME a STATUS "on" REPORT_ORDER 1 PACKAGES zlib1g-dev libtbb-dev)\n',
                                     'nbody_register_model(NAME b STATUS "off: (why)" REPORT_ORDER 2 PACKAGES libtbb-dev)\n',
                                     'nbody_register_model(NAME c STATUS "on" REPORT_ORDER 3)\n'),
                         ["libtbb-dev", "zlib1g-dev"])
        self.assertEqual(packages_of('nbody_register_model(NAME c STATUS "on" REPORT_ORDER 3)\n'), [])

    def test_the_checkouts_models_declare_package_names(self):
        listed = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, check=True).stdout.splitlines()
        self.assertIn("libtbb-dev", listed)  # stdpar's and Thrust's
        self.assertEqual(listed, sorted(set(listed)))
        for name in listed:
            self.assertRegex(name, re.compile(r"^[a-z0-9][a-z0-9.+-]*$"))


if __name__ == "__main__":
    unittest.main()
