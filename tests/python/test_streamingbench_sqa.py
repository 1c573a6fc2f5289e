"""StreamingBench SQA: every prompt svqa builds (`svqa benchmark inspect --questions`) equals the one
the official loop builds (src/benchmark/StreamingBenchSQA.py, transcribed below without the model) on
the official sample: the context string of the earlier questions with their gold answers included."""

import json
import os
import subprocess

PROMPT_TEMPLATE = '''You are an advanced video question-answering AI assistant. You have been provided with a video and a multiple-choice question related to the video. Your task is to carefully analyze the video and the provided context to answer the question, choosing from the four options provided. Respond with only the letter (A, B, C, or D) of the correct option.

{}

Here is the question. Answer it and don't confuse it with the previous conversation.
Question: {}

Options:
{}
{}
{}
{}

The best option is:'''


def official_prompts(data):
    """StreamingBenchSQAEval's prompts, keyed as svqa names the questions ("<video stem>_<k>")."""
    prompts = {}
    for video_data in data:
        context = ""
        k = 0
        for subset in video_data:
            for question in subset["questions"]:
                ques = question["question"]
                options = question["options"]
                if not options[0].startswith("A."):
                    options = [f"A. {options[0]}", f"B. {options[1]}", f"C. {options[2]}", f"D. {options[3]}"]
                inp = PROMPT_TEMPLATE.format(context, ques, *options)
                stem = os.path.splitext(os.path.basename(subset["video_path"]))[0]
                prompts[f"{stem}_{k}"] = inp
                k += 1
                if not context:
                    context += ("Here are the contextual information related to the video. Please answer the "
                                "questions based on the contextual information: ")
                context += (f"At timestamp {question['time_stamp']}, the following question and answer occurred: "
                            f"Question: {ques}; Options: {options[0]}, {options[1]}, {options[2]}, {options[3]}; "
                            f"Answer: {question['answer']}; ")
    return prompts


def test_sqa_prompts_and_context_strings_equal_the_official_code(svqa_bin, root, tmp_path):
    sample = root.parent / "shared" / "reference" / "samples" / "streamingbench_questions_sqa.sample.json"
    data = json.loads(sample.read_text())
    out = tmp_path / "questions.jsonl"
    r = subprocess.run([str(svqa_bin), "benchmark", "inspect", "streamingbench_sqa", str(sample), "--questions", str(out)],
                       cwd=root, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "videos: 2\n" in r.stdout and "questions: 10 (10 multiple choice" in r.stdout
    assert "answer rule: streamingbench\n" in r.stdout
    got = [json.loads(line) for line in out.read_text().splitlines()]
    want = official_prompts(data)
    assert len(got) == len(want) == 10
    for q in got:
        assert q["prompt"] == want[q["question_id"]], q["question_id"]
        assert q["answer_prefix"] == ""
    # The fifth question of a video carries the four before it; the first carries none.
    firsts = [q for q in got if q["question_id"].endswith("_0")]
    assert all("\n\n\n\nHere is the question." in q["prompt"] for q in firsts)
    assert all(q["prompt"].count("the following question and answer occurred") == 4
               for q in got if q["question_id"].endswith("_4"))
