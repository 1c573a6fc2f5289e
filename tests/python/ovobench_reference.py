"""OVO-Bench's official scoring (JoeLeelyf/OVO-Bench utils/OVOBenchScore.py, OVOBenchOfflineScore),
transcribed: the per-entry rules verbatim, the aggregation as score() computes it (task = mean of
its entries, group = mean of its tasks, total = mean of the three groups), returned instead of
printed. And the results file inference.py writes, built from the annotation records and responses."""

import re


def get_score(response, gt):  # calculate_score_backward_realtime
    if response == None:  # noqa: E711 (verbatim)
        return 0
    return int(gt in response)


def get_score_REC(response, gt):  # noqa: N802
    if response == None:  # noqa: E711
        return 0
    response = re.findall(r'\d+', response)
    response = "".join(response)
    return response == str(gt)


def get_score_SSR_CRR(response, gt):  # noqa: N802
    if response == None:  # noqa: E711
        return 0
    return int(gt in response)


def calculate_score_backward_realtime(results):
    for i in range(len(results)):
        results[i]["score"] = get_score(results[i]["response"], results[i]["ground_truth"])
    scores = {}
    for i in range(len(results)):
        if not results[i]["task"] in scores.keys():
            scores[results[i]["task"]] = [results[i]["score"]]
        else:
            scores[results[i]["task"]].append(results[i]["score"])
    return results, scores


def calculate_score_forward(results):
    scores = {}
    tasks = list(set([result["task"] for result in results]))
    for task in tasks:
        scores[task] = []
    for i, result in enumerate(results):
        if result["task"] == "REC":
            for j, test_info_ in enumerate(result["test_info"]):
                scores["REC"].append(get_score_REC(test_info_["response"], test_info_["count"]))
        if result["task"] in ("SSR", "CRR"):  # the two identical branches of the script
            for j, test_info_ in enumerate(result["test_info"]):
                if (test_info_["response"] == "N" and test_info_["type"] == 0) or (
                        test_info_["response"] == "Y" and test_info_["type"] == 1):
                    scores[result["task"]].append(1)
                    continue
                gt = "No" if test_info_["type"] == 0 else "Yes"
                scores[result["task"]].append(get_score_SSR_CRR(test_info_["response"], gt))
    return results, scores


def official_scores(results):
    """{"tasks": {task: fraction}, "groups": {group: fraction}, "total": fraction} as score() computes them
    (it prints 100 x these)."""
    out = {"tasks": {}, "groups": {}}
    for group, calc in (("backward", calculate_score_backward_realtime), ("realtime", calculate_score_backward_realtime),
                        ("forward", calculate_score_forward)):
        if len(results[group]) == 0:
            continue
        _, scores = calc(results[group])
        avg = []
        for k, v in scores.items():
            out["tasks"][k] = sum(v) / len(v)
            avg.append(sum(v) / len(v))
        out["groups"][group] = sum(avg) / len(avg)
    out["total"] = sum(out["groups"].values()) / 3 if len(out["groups"]) == 3 else None
    return out


BACKWARD_TASKS = ["EPM", "ASI", "HLD"]
REAL_TIME_TASKS = ["OCR", "ACR", "ATR", "STU", "FPD", "OJR"]


def results_file(annotations, response_of):
    """inference.py's results object: response_of(question_id) gives each entry's (or probe's) response;
    question ids as svqa names them ("<id>", "<id>_<probe>")."""
    import copy
    out = {"backward": [], "realtime": [], "forward": []}
    for a in annotations:
        if a["task"] in BACKWARD_TASKS + REAL_TIME_TASKS:
            out["backward" if a["task"] in BACKWARD_TASKS else "realtime"].append(
                {"id": a["id"], "video": a["video"], "task": a["task"], "question": a["question"],
                 "response": response_of(str(a["id"])), "ground_truth": chr(65 + a["gt"])})
        else:
            f = copy.deepcopy(a)
            for i, probe in enumerate(f["test_info"]):
                probe["response"] = response_of(f"{a['id']}_{i}")
            out["forward"].append(f)
    return out
