"""``--redact`` hides credentials (detect-secrets' detectors plus ours) and the identifiers the
issue listed, keeps a pid that equals a job id, and applies in every format, ``report`` and the
server's context lines included (issue 12, section 3)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dllogscan.report.credentials import find
from dllogscan.report.redact import Redactor
from tests.hostile.clirun import cli, no_traceback

JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
#: (line, what must vanish, what must stay)
CASES = [
    ("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID="),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 used", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "token"),
    ("HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "HF_TOKEN="),
    (f"Authorization: Bearer {JWT}", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "Authorization: Bearer"),
    ('curl -H "Authorization: Bearer abcdefgh12345678" https://api', "abcdefgh12345678", "curl"),
    ("+ export WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567", "0123456789abcdef", "WANDB_API_KEY="),
    ("api key 89abcdef0123456789abcdef0123456789abcdef", "89abcdef0123456789abcdef0123456789abcdef", "api key"),
    ("password=hunter22 login", "hunter22", "login"),
    ("https://alice:s3cretpw@proxy.internal:3128", "s3cretpw", "https://"),
    ("gpu03.hpc.uni-x.de: RuntimeError: boom", "gpu03", "RuntimeError: boom"),
    ("SLURMD_NODENAME=gpu07", "gpu07", "SLURMD_NODENAME="),
    ("SLURM_NODELIST=gpu[01-04],cpu7", "gpu[01-04]", "SLURM_NODELIST="),
    ("hostname: trainbox", "trainbox", "hostname:"),
    ("open /scratch/alice/run1/data.h5", "alice", "/scratch/"),
    ("ckpt at /lustre/fs1/users/bob/ckpt", "bob", "/lustre/fs1/users/"),
    ("read /nfs/users/alice/data/train.h5", "alice", "/nfs/users/"),
    ("ckpt /gpfs/fs2/home/bob7/ckpt.pt", "bob7", "/gpfs/fs2/home/"),
    ("user=carol opened a session", "carol", "opened a session"),
    ("SLURM_ARRAY_JOB_ID=98765", "98765", "SLURM_ARRAY_JOB_ID="),
    ("git clone git@internal-git:team/repo.git", "internal-git", "git@"),
    ("python train.py --password hunter22 --lr 0.1", "hunter22", "--password"),
    ("python train.py --api-key 0a1b2c3d4e5f6a7b8c9d --hf-token=abcd1234", "0a1b2c3d4e5f6a7b8c9d", "--api-key"),
    ("x.py --hf-token=abcd1234efgh", "abcd1234efgh", "--hf-token="),
    ("GITHUB_TOKEN=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG", "GITHUB_TOKEN="),
    ("SLACK_BOT_TOKEN=plainvalue99 WANDB_SECRET: s3cr3tv4lue", "plainvalue99", "SLACK_BOT_TOKEN="),
    ('{"api_token": "abcd1234efgh"}', "abcd1234efgh", '"api_token": "'),
    ("GET https://s3.example.org/b/o?X-Amz-Signature=abcdef0123456789&X-Amz-Date=1", "abcdef0123456789", "X-Amz-Date=1"),
    ("download https://data.example.org/set.tar?token=Zx81qLm2 failed", "Zx81qLm2", "failed"),
    ("blob https://acct.blob.core.windows.net/c/f?sv=2020-08-04&sig=AbC%2BdEf%3D", "AbC%2BdEf", "sv=2020-08-04"),
    ("Cookie: session=8f14e45fceea167a5a36dedd4bea2543abc", "8f14e45fceea167a5", "Cookie:"),
    # a host inside a path or file name in the text, followed by '/', a suffix or '-' (session 63)
    ('File "/data/gpu1.uni-x.de/x.py", line 3', "gpu1.uni-x.de", '/data/<host-1>/x.py", line 3'),
    ("open /logs/n12.cs.ox.ac.uk/rank0.log failed", "n12.cs.ox.ac.uk", "/logs/<host-1>/rank0.log failed"),
    ("wrote gpu1.uni-x.de-stderr.txt", "gpu1.uni-x.de", "<host-1>-stderr.txt"),
    ("tail /logs/gpu07.hpc.kit.edu-rank0.log", "gpu07.hpc.kit.edu", "/logs/<host-1>-rank0.log"),
    ("see gpu1.hpc.uni-mainz.de.log", "gpu1.hpc", "see <host-1>.log"),
    # a full line of a PEM or OpenSSH private key, alone
    ("MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi4h5Fv4v7T2+0Z6bM1a3nQ9w1x", "MIIEpAIBAAKCAQEA3Tz2", "<secret-1>"),
    ("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "b3BlbnNzaC1rZXkt", "<secret-1>"),
]
#: lines that must come out unchanged
KEPT = [
    "torch git version: 7bcf7da3a268b435777fe87c7794c382f444e86d",
    'File "/usr/lib/python3.11/site-packages/torch/utils/data/_utils/fetch.py", line 54, in fetch',
    "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error.",
    "see https://pytorch.org/docs/stable/data.html and torch.utils.data.dataloader",
    "loader = DataLoader(ds, batch_size=64, num_workers=8, prefetch_factor=2)",
    "model.ckpt.pt saved; tokenizer=bert max_tokens=512",
    "read /data/users.csv and /srv/homes/shared/x.txt",
    # credential-named settings whose value is none: code, placeholders, numbers, prose
    "tokenizer.pad_token = tokenizer.eos_token",
    '    token = os.environ["HF_TOKEN"]',
    "eos_token: </s> pad_token='[PAD]' max_token=512 --token-budget 5",
    "password: ******** --password $DB_PASS export HF_TOKEN=${HF_TOKEN}",
    "get_token(): token expired; the secret is out",
    # code after a keyword detect-secrets knows (multiprocessing's own line in a worker's traceback)
    "    c = Client(address, authkey=process.current_process().authkey)",
    "api_key: self.api_key secret_key = os.environ.get(KEY_NAME)",
    # dotted words and file names in paths that are no host names
    "open a/torch.utils.data/x.py and /work/model.ckpt.pt and libcudnn.so.8.9.2",
    "data/wmt14.en-de/train.tok.clean.bpe.32000.en-de and train.tok.en-de.txt",
    "/usr/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py",
    "ckpt/model-v1.2.3-final.ckpt.pt checkpoint-1000/pytorch_model.bin ds.v2.it-IT.json",
    "writefasta Homo_sapiens.GRCh38.dna.toplevel.fa.gz; open /app/snow.atg_arch_only.home/data/x.py",
    # a sha256 digest alone on a line is no key line (no upper case)
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "ThisIsAVeryLongCamelCaseIdentifierWithoutAnyDigitsInsideItAtAllOk",
]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("line, gone, kept", CASES)
def test_each_rule(line, gone, kept):
    out = Redactor().text(line)
    assert gone not in out and kept in out, out


@pytest.mark.timeout(20)
@pytest.mark.parametrize("line", KEPT)
def test_near_misses_stay(line):
    assert Redactor().text(line) == line
    assert find(line) == []


@pytest.mark.timeout(20)
def test_a_pid_equal_to_a_job_id_stays_a_pid():
    r = Redactor()
    r.learn({"job_id": "4242"})
    assert r.text("job 4242 failed") == "job <job-1> failed"
    assert r.text("DataLoader worker (pid 4242) is killed by signal: Killed.").endswith("(pid 4242) is killed by signal: Killed.")
    assert r.text("Killed process 4242 (python)") == "Killed process 4242 (python)"
    assert r.facts({"pid": "4242", "num_workers": "16"}) == {"pid": "4242", "num_workers": "16"}


LOG = "\n".join([
    "SLURM_JOB_ID=4242",
    "SLURMD_NODENAME=gpu07",
    "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
    f"Authorization: Bearer {JWT}",
    "Traceback (most recent call last):",
    '  File "/scratch/alice/train.py", line 9, in <module>',
    "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. AKIAIOSFODNN7EXAMPLE",
    "",
])
SECRETS = ["hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
           "AKIAIOSFODNN7EXAMPLE", "alice", "gpu07"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("args", [["-f", "text"], ["-f", "json"], ["-f", "jsonl"], ["-f", "md"], ["-f", "csv"],
                                  ["-f", "github"], ["report"], ["paste", "-f", "md"]])
def test_every_format(tmp_path, args):
    log = tmp_path / "job.log"
    log.write_text(LOG)
    if args[0] == "report":
        proc = cli("report", str(log), "--redact")
    elif args[0] == "paste":
        proc = cli(*args, "--redact", stdin=LOG.encode())
    else:
        proc = cli("scan", str(log), "--redact", *args)
    no_traceback(proc)
    out = proc.stdout.decode()
    assert "pid 4242" in out.replace("\n", " ") or args[1:] == ["csv"] or args == ["-f", "github"]
    for secret in SECRETS:
        assert secret not in out, (secret, out)


@pytest.mark.timeout(120)
def test_parquet(tmp_path):
    pd = pytest.importorskip("pandas")
    log = tmp_path / "job.log"
    log.write_text(LOG)
    no_traceback(cli("scan", str(log), "--redact", "-f", "parquet", "--out", str(tmp_path / "r.parquet")))
    text = pd.read_parquet(tmp_path / "r.parquet").to_json()
    assert not [s for s in SECRETS if s in text]


@pytest.mark.timeout(30)
def test_server_context_lines():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dllogscan.serve.app import create_app

    doc = TestClient(create_app(), base_url="http://127.0.0.1:8765").post("/api/diagnose", json={"text": LOG, "redact": True}).json()
    text = json.dumps(doc)
    assert doc["context"] and not [s for s in SECRETS if s in text]


KEY = ["MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi4h5Fv4v7T2+0Z6bM1a3nQ9w1x",
       "Kq7d9e0f1a2b3c4D5E6F7G8H9I0J1K2L3M4N5O6P7Q8R9S0T1U2V3W4X5Y6Z7a8b",
       "c9d0e1f2g3h4i5j6k7l8m9n0o1p2q3r4s5t6u7v8w9x0y1z2A3B4C5D6E7F8G9H0", "aBcD1234=="]
KEY_LOG = "\n".join(["step 1 loss 0.5", "-----BEGIN RSA PRIVATE KEY-----", "Proc-Type: 4,ENCRYPTED", "", *KEY,
                      "-----END RSA PRIVATE KEY-----", "step 2 loss 0.4", *[f"step {i}" for i in range(3, 12)],
                      "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error.", ""])


@pytest.mark.timeout(20)
def test_a_private_key_block_is_hidden_in_one_text_and_line_by_line():
    """Before, detect-secrets hid the BEGIN line alone and every body line stayed (session 63)."""
    out = Redactor().text(KEY_LOG)
    assert not [k for k in KEY if k in out] and "4,ENCRYPTED" not in out and out.count("<secret-") == 6
    assert "step 1 loss 0.5" in out and "-----END RSA PRIVATE KEY-----\nstep 2 loss 0.4" in out
    lines = list(enumerate(KEY_LOG.splitlines(), start=1))
    for shown in (lines[1:8], lines[5:10]):  # its BEGIN line, or its END line, among the lines shown
        assert not [k for k in KEY if k in " ".join(Redactor().lines(shown))], shown
    assert Redactor().lines(lines[6:8]) == ["<secret-1>", "aBcD1234=="]  # neither: a short line stays
    assert Redactor().lines([(1, "[rank0]: -----BEGIN PRIVATE KEY-----"), (2, "[rank0]: aBcD1234=="),
                             (3, "12:00:01 aBcD12345="), (4, "epoch 3 done"), (5, "AbCd")])[1:] == [
        "[rank0]: <secret-2>", "12:00:01 <secret-3>", "epoch 3 done", "AbCd"]


@pytest.mark.timeout(30)
def test_a_private_key_before_a_failure_is_hidden_in_the_pages_context():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dllogscan.serve.app import create_app

    text = "\n".join(KEY_LOG.splitlines()[:9] + KEY_LOG.splitlines()[-1:])  # the failure right after END
    doc = TestClient(create_app(), base_url="http://127.0.0.1:8765").post(
        "/api/diagnose", json={"text": text, "redact": True}).json()
    assert "-----END RSA PRIVATE KEY-----" in json.dumps(doc)  # the page shows 3 lines before the failure
    assert doc["context"] and not [k for k in KEY if k in json.dumps(doc)]


@pytest.mark.timeout(30)
def test_a_private_key_before_a_failure_is_hidden_in_its_hits_context(tmp_path):
    from dllogscan import api

    log = tmp_path / "job.log"
    log.write_text(KEY_LOG)
    hits = api.scan(log).hits
    assert [k for k in KEY if k in str(hits)]  # the hit's context holds the key's lines
    shown = str(Redactor().result(api.scan(log)).hits)
    assert not [k for k in KEY if k in shown] and "step 2 loss 0.4" in shown


@pytest.mark.timeout(60)
def test_a_plain_scan_does_not_import_the_detector(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(LOG)
    code = ("import sys; from dllogscan.cli import fast as quickscan\n"
            f"try:\n    quickscan.main([{str(log)!r}, '-f', 'json'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('detect_secrets', 'dllogscan.report.redact', 'requests') if m in sys.modules), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stderr.strip().splitlines()[-1] == "[]"


#: no DataLoader verdict: the result's own note quotes the file an ``[Errno 24]`` names
NOTE_LOG = ("Loading photos\n"
            "RuntimeError: unable to open shared memory object </torch_1_2_3> in read-write mode: "
            "Too many open files (24)\n"
            "foo: Too many open files: '/home/alice/run/alice.smith@corp.example.com.jpg'\n")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", ["text", "json", "md", "csv"])
def test_a_note_of_the_result_is_redacted(tmp_path, fmt):
    log = tmp_path / "job.log"
    log.write_text(NOTE_LOG)
    proc = cli("scan", str(log), "--redact", "-f", fmt)
    no_traceback(proc)
    out = proc.stdout.decode()
    assert "opening" in out and "alice" not in out and "corp.example" not in out, out


@pytest.mark.timeout(20)
@pytest.mark.parametrize("last", ["Zg==", "q83=", "Q==", "x"])
def test_a_private_keys_short_last_line_is_hidden(last):
    """Before, the body's last line, shorter than 4 base64 characters before its padding, stayed:
    in one text, and shown line by line with the END line after it."""
    text = "\n".join(["-----BEGIN PRIVATE KEY-----", *KEY[:3], last, "-----END PRIVATE KEY-----", "step 2"])
    out = Redactor().text(text)
    assert f"\n{last}\n" not in out and out.endswith("<secret-1>\n-----END PRIVATE KEY-----\nstep 2"), out
    lines = list(enumerate(text.splitlines(), start=1))
    assert Redactor().lines(lines[3:]) == ["<secret-1>", "<secret-2>", "-----END PRIVATE KEY-----", "step 2"]
    assert Redactor().lines([(1, "step 1"), (2, last), (3, "step 3")]) == ["step 1", last, "step 3"]  # no key


@pytest.mark.timeout(20)
def test_a_private_key_with_escaped_line_ends_is_hidden():
    """A service account's JSON printed in a log holds its key on one line, ``\\n`` escaped:
    before, only the BEGIN line's words were hidden and the whole body stayed."""
    body = "\\n".join([*KEY[:3], "Zg=="])
    line = f'{{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n", "x": 1}}'
    out = Redactor().text(line)
    assert not [k for k in KEY[:3] if k in out] and "Zg==" not in out, out
    assert out.endswith('\\n-----END PRIVATE KEY-----\\n", "x": 1}') and '"type": "service_account"' in out
