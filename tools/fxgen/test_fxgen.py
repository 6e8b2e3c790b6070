#!/usr/bin/env python3
"""Tests for the fxgen archive writer and validator; no torch needed.

    python3 tools/fxgen/test_fxgen.py

Checks the committed corpus with check_archive.py (every program.pt2 and
exported.pt2, written by a genuine torch release that producer.json names),
the zip layout written by pt2zip, and that check_archive rejects corrupted
archives and degenerate fixtures (each must be reported, naming what is
wrong).
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

    def test_exported_programs_are_valid(self):
        kept = [n for n in corpus_programs() if os.path.isfile(os.path.join(CORPUS, n, "exported.pt2"))]
        self.assertGreaterEqual(len(kept), 3, kept)
        for name in kept:
            with self.subTest(program=name):
                check_archive.check_path(os.path.join(CORPUS, name, "exported.pt2"))

    def test_every_program_records_its_genuine_torch(self):
        for name in corpus_programs():
            with self.subTest(program=name):
                with open(os.path.join(CORPUS, name, "producer.json")) as f:
                    producer = json.load(f)
                major_minor = tuple(int(x) for x in producer["torch"].split("+")[0].split(".")[:2])
                self.assertGreaterEqual(major_minor, (2, 9), producer["torch"])
                for archive, info in producer["archives"].items():
                    _, records = check_archive.read_container(os.path.join(CORPUS, name, archive))
                    ep = json.loads(records["models/model.json"])
                    self.assertEqual(ep["torch_version"], producer["torch"], archive)
                    self.assertEqual(len(ep["graph_module"]["graph"]["nodes"]), info["nodes"], archive)
                self.assertEqual(producer["archives"]["program.pt2"]["form"], "core ATen")

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

    def write_output(self, values, index=0, descr="<f4"):
        """Replaces io/output_<index>.npy by a float32 array of values, shape kept."""
        path = os.path.join(self.tmp, "io", "output_%d.npy" % index)
        _, shape, old = check_archive.read_npy(path)
        self.assertEqual(len(values), len(old))
        header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, shape)
        header += " " * (-(len(header) + 11) % 64) + "\n"
        with open(path, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
            f.write(struct.pack("<%df" % len(values), *values))

    def test_real_output_passes(self):
        _, _, old = check_archive.read_npy(os.path.join(self.tmp, "io", "output_0.npy"))
        self.write_output(list(old))
        check_archive.check_path(self.write(self.records))

    def test_all_zero_output(self):
        _, _, old = check_archive.read_npy(os.path.join(self.tmp, "io", "output_0.npy"))
        self.write_output([0.0] * len(old))
        self.assert_rejected(self.write(self.records), "all zero")

    def test_constant_output(self):
        _, _, old = check_archive.read_npy(os.path.join(self.tmp, "io", "output_0.npy"))
        self.write_output([0.25] * len(old))
        self.assert_rejected(self.write(self.records), "constant")

    def test_nan_output(self):
        _, _, old = check_archive.read_npy(os.path.join(self.tmp, "io", "output_0.npy"))
        self.write_output([float("nan")] + list(old[1:]))
        self.assert_rejected(self.write(self.records), "not finite")

    def test_trivial_batch_norm_statistics(self):
        root, records = check_archive.read_container(os.path.join(CORPUS, "resnet18", "program.pt2"))
        cfg = json.loads(records["data/weights/model_weights_config.json"])
        meta = cfg["config"]["bn1.running_var"]
        n = len(records["data/weights/" + meta["path_name"]]) // 4
        records = dict(records)
        records["data/weights/" + meta["path_name"]] = struct.pack("<%df" % n, *([1.0] * n))
        os.makedirs(os.path.join(self.tmp, "bn"))
        path = os.path.join(self.tmp, "bn", "program.pt2")  # no io/ beside it
        with open(path, "wb") as f:
            f.write(pt2zip.write_zip(root, records))
        with self.assertRaises(check_archive.CheckError) as cm:
            check_archive.check_path(path)
        self.assertIn("BatchNorm statistics are trivial", str(cm.exception))

    def test_wrong_input_file(self):
        shutil.copy(os.path.join(self.tmp, "io", "input_1.npy"), os.path.join(self.tmp, "io", "input_0.npy"))
        self.assert_rejected(self.write(self.records), "does not match input x")


if __name__ == "__main__":
    unittest.main()
