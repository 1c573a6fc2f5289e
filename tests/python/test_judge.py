"""`svqa score` with the LLM judge of open-ended answers (RVS-Ego sample) against a local fake
OpenAI-compatible server: the exact reference messages, retries bounded by --judge-attempts,
timeouts, HTTP errors, unparseable replies, the Authorization header and the judgment cache."""

import http.server
import json
import os
import re
import subprocess
import threading
import time

import pytest

# The reference messages (../shared/reference/benchmarks.md §1, ReKV's eval_open_ended.py), byte for
# byte: the missing separators and the double space in "is  a string" are theirs.
SYSTEM = (
    "You are an intelligent chatbot designed for evaluating the correctness of generative outputs for "
    "question-answer pairs. Your task is to compare the predicted answer with the correct answer and determine if "
    "they match meaningfully. Here's how you can accomplish the task:------##INSTRUCTIONS: - Focus on the "
    "meaningful match between the predicted answer and the correct answer.\n- Consider synonyms or paraphrases as "
    "valid matches.\n- Evaluate the correctness of the prediction compared to the answer."
)
USER = (
    "Please evaluate the following video-based question-answer pair:\n\nQuestion: {question}\nCorrect Answer: "
    "{answer}\nPredicted Answer: {pred}\n\nProvide your evaluation only as a yes/no and score where the score is an "
    "integer value between 0 and 5, with 5 indicating the highest meaningful match. Please generate the response in "
    "the form of a Python dictionary string with keys 'pred' and 'score', where value of 'pred' is  a string of "
    "'yes' or 'no' and value of 'score' is in INTEGER, not STRING.DO NOT PROVIDE ANY OTHER OUTPUT TEXT OR "
    "EXPLANATION. Only provide the Python dictionary string. For example, your response should look like this: "
    "{{'pred': 'yes', 'score': 4.8}}."
)

VIDEO = "af400f98-3c57-46ad-acac-eaca6f940180"  # 31 questions in the sample; the first 10 answered, the 11th errored
MODEL = "fake-judge-1"
TIMEOUT_S = 0.5
ATTEMPTS = 3

# What the server does for the k-th question of VIDEO: ("reply", content), ("sleep", seconds),
# ("http500",), ("http500 once", content). Expected by hand: yes 0, 1, 3, 9; no 2, 7; neither 4;
# failed 5, 6, 8. Accuracy 4 / 6; score (4 + 5 + 1 + 4 + 3 + 2 + 3) / 7 = 22 / 7.
BEHAVIOUR = {
    0: ("reply", "{'pred': 'yes', 'score': 4}"),
    1: ("reply", "{'pred': 'yes', 'score': 5}"),
    2: ("reply", "{'pred': 'no', 'score': 1}"),
    3: ("reply", '{"pred": "yes", "score": 4.8}'),                       # JSON quotes; int(4.8) = 4
    4: ("reply", "Here it is: {'pred': 'partially', 'score': 3} done"),  # neither yes nor no
    5: ("sleep", 2 * TIMEOUT_S),                                         # every try times out
    6: ("http500",),                                                     # every try fails
    7: ("http500 once", "{'pred': 'no', 'score': 2}"),                  # a retry succeeds
    8: ("reply", "I think the prediction is right."),                   # unparseable every time
    9: ("reply", "{'prev': 'YES', 'score': '3'}"),                      # fallback key, quoted score
}
FAILED = {5, 6, 8}


class FakeJudge:
    """A threaded HTTP server on 127.0.0.1:0 that records every request."""

    def __init__(self, question_index):
        self.question_index = question_index  # question text → k
        self.requests = []                    # (path, authorization header or None, body dict, k)
        self.lock = threading.Lock()
        judge = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                user = body["messages"][1]["content"]
                k = judge.question_index[re.search(r"\nQuestion: (.*)\nCorrect Answer: ", user).group(1)]
                with judge.lock:
                    judge.requests.append((self.path, self.headers.get("Authorization"), body, k))
                    tries = sum(1 for r in judge.requests if r[3] == k)
                kind = BEHAVIOUR[k]
                if kind[0] == "sleep":
                    time.sleep(kind[1])
                    return self.send_content("{'pred': 'yes', 'score': 5}")  # too late: the client gave up
                if kind[0] == "http500" or (kind[0] == "http500 once" and tries == 1):
                    return self.send(500, b'{"error": {"message": "overloaded"}}')
                self.send_content(kind[1])

            def send_content(self, content):
                self.send(200, json.dumps({"choices": [{"index": 0, "message": {"role": "assistant",
                                                                                  "content": content}}]}).encode())

            def send(self, status, data):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/"  # the trailing slash is stripped
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def count(self, k):
        with self.lock:
            return sum(1 for r in self.requests if r[3] == k)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def sample(root):
    path = root.parent / "shared" / "reference" / "samples" / "rvs_ego4d_oe.sample.json"
    if not path.is_file():
        pytest.fail(f"{path} not found: the shared reference folder must sit beside the repository")
    return path


@pytest.fixture
def conversations(sample):
    return next(v for v in json.loads(sample.read_text()) if v["video_id"] == VIDEO)["conversations"]


@pytest.fixture
def server(conversations):
    s = FakeJudge({c["question"]: k for k, c in enumerate(conversations[:10])})
    yield s
    s.close()


def prediction(k):
    return "A road\nnear a park." if k == 0 else f"Answer {k}."  # newlines are removed before judging


def write_predictions(path, overrides=None, answered=range(10)):
    records = [{"stream": VIDEO, "question_id": f"{VIDEO}_{k}", "prediction": (overrides or {}).get(k, prediction(k))}
               for k in answered]
    records.append({"stream": VIDEO, "question_id": f"{VIDEO}_10", "error": "decode failed"})  # not judged
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def clean_env(**extra):
    """The environment without any judge settings or proxies of the developer's, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "SVQA_JUDGE_MODEL", "SVQA_TEST_JUDGE_KEY")
           and "proxy" not in k.lower()}
    env.update(extra)
    return env


def score(svqa_bin, root, sample, predictions, *args, env):
    return subprocess.run([str(svqa_bin), "score", "rvs_ego", str(sample), str(predictions), *args],
                          cwd=root, capture_output=True, text=True, timeout=60, env=env)


FAST = ["--judge-timeout", str(TIMEOUT_S), "--judge-attempts", str(ATTEMPTS), "--judge-backoff", "0"]


def test_judge_end_to_end_with_retries_failures_and_cache(svqa_bin, root, sample, conversations, server, tmp_path):
    preds = write_predictions(tmp_path / "predictions.jsonl")
    out = tmp_path / "score.json"
    r = score(svqa_bin, root, sample, preds, "--judge-url", server.url, "--judge-model", MODEL,
              "--judge-key-env", "SVQA_TEST_JUDGE_KEY", *FAST, "--out", str(out),
              env=clean_env(SVQA_TEST_JUDGE_KEY="sk-test-123"))
    assert r.returncode == 0, r.stderr

    # Every request: the endpoint, the key, the exact messages, temperature 0, max_tokens 300.
    assert server.requests
    for path, authorization, body, k in server.requests:
        assert path == "/v1/chat/completions"
        assert authorization == "Bearer sk-test-123"
        c = conversations[k]
        assert body == {"model": MODEL,
                        "messages": [{"role": "system", "content": SYSTEM},
                                     {"role": "user", "content": USER.format(question=c["question"], answer=c["answer"],
                                                                             pred=prediction(k).replace("\n", ""))}],
                        "temperature": 0, "max_tokens": 300}
    # Requests per question: one when it works, two for the 500-once, max_attempts for the failures.
    assert {k: server.count(k) for k in range(10)} == {k: ATTEMPTS if k in FAILED else 2 if k == 7 else 1
                                                         for k in range(10)}

    assert "judged by `fake-judge-1`" in r.stdout
    assert "| questions | answered | judged | yes | no | neither | failed | accuracy (%) | score (0–5) |" in r.stdout
    assert "| 187 | 10 | 7 | 4 | 2 | 1 | 3 | 66.7 | 3.14 |" in r.stdout
    assert "- 3 failed (no readable reply after every try; in neither number)" in r.stdout
    assert "not scored here" not in r.stdout
    assert f"judge: {VIDEO} {VIDEO}_5: failed after 3 tries: timeout after 0.5 s" in r.stderr
    assert f"judge: {VIDEO} {VIDEO}_6: failed after 3 tries: HTTP 500" in r.stderr
    assert f"judge: {VIDEO} {VIDEO}_8: failed after 3 tries: unparseable reply: I think" in r.stderr

    j = json.loads(out.read_text())
    tally = j["open_ended"]["judge"]
    assert tally["model"] == MODEL
    assert (tally["yes"], tally["no"], tally["neither"], tally["failed"], tally["from_cache"]) == (4, 2, 1, 3, 0)
    assert tally["accuracy"] == pytest.approx(4 / 6)
    assert tally["score"] == pytest.approx(22 / 7)
    judged = {q["question_id"]: q.get("judge") for q in j["questions"]}
    assert judged[f"{VIDEO}_0"] == {"verdict": "yes", "score": 4, "reply": "{'pred': 'yes', 'score': 4}",
                                    "attempts": 1, "cached": False}
    assert judged[f"{VIDEO}_3"]["score"] == 4
    assert judged[f"{VIDEO}_4"]["verdict"] == "neither"
    assert judged[f"{VIDEO}_7"]["verdict"] == "no" and judged[f"{VIDEO}_7"]["attempts"] == 2
    assert judged[f"{VIDEO}_9"]["verdict"] == "yes" and judged[f"{VIDEO}_9"]["score"] == 3
    assert judged[f"{VIDEO}_5"]["verdict"] == "failed" and judged[f"{VIDEO}_5"]["error"] == "timeout after 0.5 s"
    assert judged[f"{VIDEO}_6"]["error"].startswith("HTTP 500")
    assert judged[f"{VIDEO}_8"]["reply"] == "I think the prediction is right."
    assert judged[f"{VIDEO}_10"] is None  # errored: no output to judge
    assert judged[f"{VIDEO}_11"] is None  # missing

    # The cache beside the predictions: the 7 successful judgments, prediction without newlines.
    cache = [json.loads(line) for line in (tmp_path / "judge_cache.jsonl").read_text().splitlines()]
    assert len(cache) == 7
    assert {"model": MODEL, "question": conversations[0]["question"], "answer": conversations[0]["answer"],
            "prediction": "A roadnear a park.", "reply": "{'pred': 'yes', 'score': 4}", "verdict": "yes",
            "score": 4} in cache

    # A rerun, the judge from the environment this time and no key: the successful ones come from
    # the cache (no request), the failed ones are asked again.
    before = {k: server.count(k) for k in range(10)}
    n = len(server.requests)
    r = score(svqa_bin, root, sample, preds, *FAST, "--out", str(out),
              env=clean_env(OPENAI_BASE_URL=server.url, SVQA_JUDGE_MODEL=MODEL))
    assert r.returncode == 0, r.stderr
    assert f"7 judgments cached in {tmp_path / 'judge_cache.jsonl'}" in r.stderr
    assert {k: server.count(k) - before[k] for k in range(10)} == {k: ATTEMPTS if k in FAILED else 0 for k in range(10)}
    assert all(authorization is None for _, authorization, _, _ in server.requests[n:])
    assert "| 187 | 10 | 7 | 4 | 2 | 1 | 3 | 66.7 | 3.14 |" in r.stdout
    assert "7 judgments from the cache" in r.stdout
    tally = json.loads(out.read_text())["open_ended"]["judge"]
    assert (tally["from_cache"], tally["failed"]) == (7, 3)


def test_a_torn_cache_line_is_skipped_and_a_new_judgment_still_readable(svqa_bin, root, sample, server, tmp_path):
    preds = write_predictions(tmp_path / "predictions.jsonl", answered=[0, 1, 2])  # quick: no failures
    cache = tmp_path / "cache" / "judge.jsonl"  # the parent is created
    args = ["--judge-url", server.url, "--judge-model", MODEL, "--judge-cache", str(cache), *FAST]
    assert score(svqa_bin, root, sample, preds, *args, env=clean_env()).returncode == 0
    with cache.open("a") as f:
        f.write('{"model": "fake-judge-1", "question": "Is the')  # a crash in the middle of a line
    write_predictions(preds, {1: "Yes, two people."}, answered=[0, 1, 2])  # a new prediction: judged, appended
    n = server.count(1)
    r = score(svqa_bin, root, sample, preds, *args, env=clean_env())
    assert r.returncode == 0, r.stderr
    assert "(1 unreadable lines skipped)" in r.stderr
    assert server.count(1) == n + 1
    r = score(svqa_bin, root, sample, preds, *args, env=clean_env())
    assert "4 judgments cached" in r.stderr and "(1 unreadable lines skipped)" in r.stderr
    assert server.count(1) == n + 1


def test_without_a_judge_url_nothing_is_judged_and_a_missing_model_is_named(svqa_bin, root, sample, server, tmp_path):
    preds = write_predictions(tmp_path / "predictions.jsonl")
    r = score(svqa_bin, root, sample, preds, "--judge-model", MODEL, env=clean_env())
    assert r.returncode == 0, r.stderr
    assert "open-ended: 187 questions, 10 answered; they need the GPT judge (not scored here)" in r.stdout
    assert "no judge URL (--judge-url or $OPENAI_BASE_URL)" in r.stderr
    r = score(svqa_bin, root, sample, preds, "--judge-url", server.url, env=clean_env())
    assert r.returncode == 2
    assert "judge.model: not given and $SVQA_JUDGE_MODEL is not set" in r.stderr
    assert not server.requests


def test_svqa_run_judges_open_ended_answers_and_report_shows_them(svqa_bin, root, tiny_export, tmp_path):
    """An experiment with a `judge:` section: `svqa run` judges its open-ended answers at the end
    (cache beside the run), scores.json keeps the verdicts, `svqa report` shows them, a rerun asks
    the server only for the failed one."""
    asked = {0: "What is on screen at the start?", 2: "What changed after a while?", 6: "What color came last?"}
    server = FakeJudge({text: k for k, text in asked.items()})
    try:
        subprocess.run([svqa_bin, "make-video", tmp_path / "v.avi", "--seconds", "30"], check=True, capture_output=True)
        questions = [{"id": f"q{k}", "time": 10.0 + k, "question": text, "answer": "A coloured background."}
                     for k, text in asked.items()]
        (tmp_path / "streams.json").write_text(json.dumps({"streams": [{"id": "s", "video": "v.avi", "questions": questions}]}))
        (tmp_path / "open.yaml").write_text(f"""
name: open
backbone: {{type: torchscript, options: {{export: {tiny_export('llava_onevision')}}}}}
encoding: {{type: rekv_sliding_window, options: {{n_local: 40}}}}
retrieval: {{type: internal, options: {{retrieve_size: 4}}}}
benchmark: {{type: stream_list, options: {{annotations: {tmp_path / 'streams.json'}}}}}
stream: {{max_new_tokens: 4}}
judge: {{base_url: {server.url}, model: {MODEL}, timeout_s: {TIMEOUT_S}, max_attempts: 2, backoff_s: 0}}
output: {{dir: {tmp_path / 'results'}}}
""")
        r = subprocess.run([svqa_bin, "run", tmp_path / "open.yaml"], capture_output=True, text=True, env=clean_env())
        assert r.returncode == 0, r.stderr
        assert "judging 3 open-ended answers with fake-judge-1" in r.stdout
        tally = json.loads((tmp_path / "results" / "open" / "scores.json").read_text())["open_ended"]["judge"]
        assert (tally["yes"], tally["no"], tally["failed"]) == (1, 1, 1)
        assert tally["accuracy"] == pytest.approx(0.5) and tally["score"] == pytest.approx((4 + 1) / 2)
        assert {k: server.count(k) for k in asked} == {0: 1, 2: 1, 6: 2}
        assert (tmp_path / "results" / "judge_cache.jsonl").is_file()

        r = subprocess.run([svqa_bin, "run", tmp_path / "open.yaml"], capture_output=True, text=True, env=clean_env())
        assert r.returncode == 0, r.stderr
        assert {k: server.count(k) for k in asked} == {0: 1, 2: 1, 6: 4}  # only the failed one asked again

        r = subprocess.run([svqa_bin, "report", tmp_path / "results"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("| method |"))
        header, row = lines[at], lines[at + 2]  # the run's row, under the header and its rule
        cells = dict(zip([c.strip() for c in header.split("|")], [c.strip() for c in row.split("|")]))
        assert (cells["judge acc %"], cells["judge score"], cells["judge failed"]) == ("50.0", "2.50", "1")
    finally:
        server.close()
