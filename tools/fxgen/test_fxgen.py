#!/usr/bin/env python3
"""Tests for the fxgen archive writer and validator; no torch needed.

    python3 tools/fxgen/test_fxgen.py

Checks the committed corpus with check_archive.py, the zip layout written by
pt2zip, and that check_archive rejects corrupted archives (each corruption
must be reported, naming what is wrong).
"""

import sys

sys.dont_write_bytecode = True

import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import struct  # noqa: E402
import tempfile  # noqa: E402
import unittest  # noqa: E402
import zipfile  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(REPO, "tests", "corpus")
sys.path.insert(0, HERE)

import check_archive  # noqa: E402
from fxgenlib import pt2zip  # noqa: E402


def corpus_programs():
    if not os.path.isdir(CORPUS):
        return []
    return sorted(d for d in os.listdir(CORPUS) if os.path.isfile(os.path.join(CORPUS, d, "program.pt2")))


class CorpusTest(unittest.TestCase):
    def test_corpus_is_present(self):
        self.assertGreaterEqual(len(corpus_programs()), 12)

    def test_every_program_is_valid(self):
        ops = check_archive.load_ops_spec(os.path.join(REPO, "gen", "ops.spec"))
        for name in corpus_programs():
            with self.subTest(program=name):
                check_archive.check_path(os.path.join(CORPUS, name), ops)

    def test_some_programs_are_dynamic(self):
        dynamic = []
        for name in corpus_programs():
            _, records = check_archive.read_container(os.path.join(CORPUS, name, "program.pt2"))
            if json.loads(records["models/model.json"])["range_constraints"]:
                dynamic.append(name)
        self.assertGreaterEqual(len(dynamic), 2, dynamic)


class ZipLayoutTest(unittest.TestCase):
    records = {"b": b"x" * 100, "a/c.json": b"{}", "empty": b""}

    def test_readable_aligned_sorted(self):
        data = pt2zip.write_zip("root", self.records)
        path = os.path.join(tempfile.mkdtemp(), "t.pt2")
        self.addCleanup(shutil.rmtree, os.path.dirname(path))
        with open(path, "wb") as f:
            f.write(data)
        zf = zipfile.ZipFile(path)
        self.assertEqual([i.filename for i in zf.infolist()], ["root/a/c.json", "root/b", "root/empty"])
        for info in zf.infolist():
            self.assertEqual(info.compress_type, zipfile.ZIP_STORED)
            self.assertEqual(info.flag_bits, 0x0808)
            name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
            self.assertEqual((info.header_offset + 30 + name_len + extra_len) % 64, 0)
            self.assertEqual(zf.read(info), self.records[info.filename[5:]])

    def test_deterministic(self):
        self.assertEqual(pt2zip.write_zip("r", self.records), pt2zip.write_zip("r", dict(reversed(self.records.items()))))
        self.assertEqual(pt2zip.serialization_id(self.records), pt2zip.serialization_id(dict(self.records)))
        self.assertEqual(len(pt2zip.serialization_id(self.records)), 40)

    def test_bad_root(self):
        with self.assertRaises(pt2zip.ZipWriteError):
            pt2zip.write_zip("a/b", self.records)


class CorruptionTest(unittest.TestCase):
    """check_archive must reject each of these edits of a real corpus program."""

    def setUp(self):
        names = corpus_programs()
        if "llama_block" not in names:
            self.skipTest("corpus not generated")
        self.src = os.path.join(CORPUS, "llama_block")
        self.root, self.records = check_archive.read_container(os.path.join(self.src, "program.pt2"))
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        shutil.copytree(os.path.join(self.src, "io"), os.path.join(self.tmp, "io"))

    def write(self, records, raw=None):
        path = os.path.join(self.tmp, "program.pt2")
        with open(path, "wb") as f:
            f.write(raw if raw is not None else pt2zip.write_zip(self.root, records))
        return self.tmp

    def edit_program(self, fn):
        records = dict(self.records)
        ep = json.loads(records["models/model.json"])
        fn(ep)
        records["models/model.json"] = json.dumps(ep).encode()
        return records

    def assert_rejected(self, target, fragment):
        with self.assertRaises(check_archive.CheckError) as cm:
            check_archive.check_path(target)
        self.assertIn(fragment, str(cm.exception))

    def test_unchanged_copy_passes(self):
        check_archive.check_path(self.write(self.records))

    def test_missing_weight_record(self):
        records = dict(self.records)
        del records["data/weights/weight_0"]
        self.assert_rejected(self.write(records), "record data/weights/weight_0 missing")

    def test_short_payload(self):
        records = dict(self.records)
        records["data/weights/weight_0"] = records["data/weights/weight_0"][:-4]
        self.assert_rejected(self.write(records), "reaches element")

    def test_undefined_input_name(self):
        def edit(ep):
            ep["graph_module"]["graph"]["nodes"][3]["inputs"][0]["arg"] = {"as_tensor": {"name": "nope"}}
        self.assert_rejected(self.write(self.edit_program(edit)), "name nope used before it is defined")

    def test_two_union_tags(self):
        def edit(ep):
            ep["graph_module"]["graph"]["nodes"][0]["outputs"][0]["as_none"] = True
        self.assert_rejected(self.write(self.edit_program(edit)), "exactly one key")

    def test_field_order(self):
        def edit(ep):
            node = ep["graph_module"]["graph"]["nodes"][0]
            node["target"] = node.pop("target")
        self.assert_rejected(self.write(self.edit_program(edit)), "declaration order")

    def test_signature_mismatch(self):
        def edit(ep):
            ep["graph_module"]["signature"]["input_specs"].pop()
        self.assert_rejected(self.write(self.edit_program(edit)), "input specs for")

    def test_mutation_of_unknown_buffer(self):
        def edit(ep):
            spec = ep["graph_module"]["signature"]["output_specs"][0]
            spec["buffer_mutation"]["buffer_name"] = "nope"
        self.assert_rejected(self.write(self.edit_program(edit)), "not a buffer input")

    def test_op_not_in_table(self):
        ops = check_archive.load_ops_spec(os.path.join(REPO, "gen", "ops.spec"))

        def edit(ep):
            ep["graph_module"]["graph"]["nodes"][0]["target"] = "torch.ops.aten.bogus_op.default"
        with self.assertRaises(check_archive.CheckError) as cm:
            check_archive.check_path(self.write(self.edit_program(edit)), ops)
        self.assertIn("not in the op table", str(cm.exception))

    def test_argument_not_in_schema(self):
        ops = check_archive.load_ops_spec(os.path.join(REPO, "gen", "ops.spec"))

        def edit(ep):
            ep["graph_module"]["graph"]["nodes"][0]["inputs"][0]["name"] = "input_tensor"
        with self.assertRaises(check_archive.CheckError) as cm:
            check_archive.check_path(self.write(self.edit_program(edit)), ops)
        self.assertIn("is not in the schema", str(cm.exception))

    def test_compressed_zip(self):
        path = os.path.join(self.tmp, "program.pt2")
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in sorted(self.records.items()):
                zf.writestr("%s/%s" % (self.root, name), data)
        self.assert_rejected(self.tmp, "compressed")

    def test_wrong_input_file(self):
        shutil.copy(os.path.join(self.tmp, "io", "input_1.npy"), os.path.join(self.tmp, "io", "input_0.npy"))
        self.assert_rejected(self.write(self.records), "does not match input x")


if __name__ == "__main__":
    unittest.main()
