"""Write a synthetic decoder stack as fxport IR text, without torch.

    fxport parse tests/corpus/llama_block/program.pt2 > llama.fxir
    python3 tools/identity/decoder_stack.py llama.fxir BLOCKS OUT.fxir

The corpus llama_block program (one genuine torch.export decoder block:
RMSNorm, rotary embeddings, grouped-query attention over a KV cache held in
buffers and updated with index_put, SwiGLU) is repeated BLOCKS times, each
block with its own weights (distinct bytes from OUT.fxir.bin, written beside
it) and its own KV caches, returned as buffer mutations; the rotary tables
and their indexing are shared, as in tools/anchors/scaling.py's stack. About
101 IR nodes per block: 10 blocks are about 1k nodes, 99 about 10k. Stands in
for scaling.py's genuine stacks where torch is not at hand: the same shape
(many XNNPACK partitions, long-lived KV-cache values), not the same program.
"""
import os
import random
import re
import struct
import sys

SHARED = {"index", "index_1", "unsqueeze", "unsqueeze_1", "unsqueeze_2", "unsqueeze_3"}


def main(src, blocks, out):
    lines = open(src).read().split("\n")
    meta = [l for l in lines if l.startswith("meta ")]
    specs = [l for l in lines if l.startswith("in_spec ") or l.startswith("out_spec ")]
    corpus = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    rope = [l.replace('"tests/corpus', '"' + corpus + "/tests/corpus") for l in lines if l.startswith('weight "rope_')]
    gi = next(i for i, l in enumerate(lines) if l.startswith("graph "))
    ptype = dict(re.findall(r"%([a-z_0-9]+): ([a-z0-9]+\[[0-9, ]*\])", lines[gi]))
    body = []
    for l in lines[gi + 1:]:
        if l.startswith("  return"):
            break
        m = re.search(r' \{[a-z_]+ = "', l)  # drop node metadata
        body.append(l[:m.start()] if m else l)

    def name_of(l):
        m = re.match(r"  %([a-z_0-9]+):", l)
        return m.group(1) if m else None

    decl = {}  # placeholder -> (target, kind)
    for l in lines:
        m = re.match(r'input (p_[a-z_0-9]+): parameter "([^"]+)"', l)
        if m:
            decl[m.group(1)] = (m.group(2), "parameter")
        m = re.match(r'input (b_attention_[kv]_cache): buffer "([^"]+)" persistent', l)
        if m:
            decl[m.group(1)] = (m.group(2), "buffer")

    def numel(t):
        n = 1
        for d in re.search(r"\[(.*)\]", t).group(1).split(","):
            if d.strip():
                n *= int(d)
        return n

    data = os.path.abspath(out) + ".bin"
    words = max(numel(ptype[p]) for p in decl) + len(decl) * blocks + 1
    rnd = random.Random(1)
    with open(data, "wb") as f:
        f.write(struct.pack("<%df" % words, *[0.25 + rnd.random() / 4 for _ in range(words)]))
    head, weights, sig, muts, nodes = [], [], [], [], []
    k = 0
    for i in range(blocks):
        for p, (tgt, kind) in decl.items():
            ph, t = "%s_L%d" % (p, i), "layers.%d.%s" % (i, tgt)
            if kind == "parameter":
                head.append('input %s: parameter "%s"' % (ph, t))
            else:
                head.append('input %s: buffer "%s" persistent' % (ph, t))
                muts.append('output buffer_mutation "%s"' % t)
            # Each weight starts one float later in the file: distinct bytes.
            weights.append('weight "%s": %s = file("%s", offset=%d, size=%d)' % (t, ptype[p], data, 4 * k, 4 * numel(ptype[p])))
            k += 1
            sig.append("%%%s: %s" % (ph, ptype[p]))
    head += ['input b_rope_cos: buffer "rope_cos"', 'input b_rope_sin: buffer "rope_sin"', "input x: user_input", "input input_pos: user_input"]
    sig += ["%%%s: %s" % (v, ptype[v]) for v in ("b_rope_cos", "b_rope_sin", "x", "input_pos")]
    nodes += [l for l in body if name_of(l) in SHARED]
    local = set(name_of(l) for l in body if name_of(l) and name_of(l) not in SHARED)
    h, rets = "x", []
    for i in range(blocks):
        def ren(m):
            n = m.group(1)
            if n == "x":
                return "%" + h
            if n in local or n in decl:
                return "%%%s_L%d" % (n, i)
            return "%" + n
        nodes += [re.sub(r"%([a-z_0-9]+)", ren, l) for l in body if name_of(l) not in SHARED]
        rets += ["%%index_put_L%d" % i, "%%index_put_1_L%d" % i]
        h = "add_5_L%d" % i
    with open(out, "w") as f:
        f.write("\n".join(meta + head + muts + ["output user_output"] + specs + weights + rope) + "\n\n")
        f.write("graph forward(%s) {\n" % ", ".join(sig))
        f.write("\n".join(nodes) + "\n")
        f.write("  return %s\n}\n" % ", ".join(rets + ["%" + h]))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
