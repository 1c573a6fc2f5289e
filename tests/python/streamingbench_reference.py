"""StreamingBench's Proactive Output protocol and scorer (THUNLP-MT/StreamingBench), transcribed:
the polling loop of src/benchmark/StreamingBenchProactive.py with the model and the clip cut
replaced by a callable, and src/data/count.py's proactive branch returning its stats instead of
writing them. Quirks kept: "yes" anywhere in the lowercased answer stops the polling; count.py judges
history[-1] (the last turn, whatever it is) and skips a question without the model's key."""

from collections import defaultdict

PROMPT_TEMPLATE_PROACTIVE = '''You are an advanced image question-answering AI assistant. You have been provided with images and a question related to the images. Your task is to carefully analyze the images and provide the answer to the question. You need to carefully confirm whether the images content meet the conditions of the question, and then output the correct content.

Question: {}

The answer is:
'''


def seconds(stamp):
    return sum(int(x) * 60 ** i for i, x in enumerate(reversed(stamp.split(":"))))


def proactive_eval(data, model_name, get_model_response):
    """StreamingBenchProactiveEval; get_model_response(question, clip_start, clip_end, inp) -> str
    stands for split_video + the model. Costs are 0 (they are wall times)."""
    for subset in data:
        for question in subset["questions"]:
            if model_name in question and question[model_name]['dialog_history'][-1]['content']:
                continue
            start_time = seconds(question["time_stamp"])
            ground_truth_time = seconds(question["ground_truth_time_stamp"])
            max_time = ground_truth_time + 4
            dialog_history = []
            answered = False
            query = f"{question['question']} Is it the right time to output \"{question['ground_truth_output']}\"? You can only answer yes or no."
            inp = PROMPT_TEMPLATE_PROACTIVE.format(query)
            current_time = start_time + 1
            while current_time <= max_time:
                interval = 1
                response = get_model_response(question, start_time, current_time, inp)
                timecost = 0
                dialog_history.append({'role': 'user', 'content': query, 'time': current_time, 'cost': timecost})
                dialog_history.append({'role': 'assistant', 'content': response, 'time': current_time, 'cost': timecost})
                if 'yes' in response.strip().lower():
                    inp = PROMPT_TEMPLATE_PROACTIVE.format(question['question'])
                    response = get_model_response(question, start_time, current_time, inp)
                    dialog_history.append({'role': 'user', 'content': question['question'], 'time': current_time, 'cost': timecost})
                    dialog_history.append({'role': 'assistant', 'content': response, 'time': current_time, 'cost': timecost})
                    answered = current_time
                    break
                current_time += interval
            question[model_name] = {"answered": answered, "dialog_history": dialog_history}
    return data


def count_proactive(data, model):
    """count.py, task proactive: per task_type total, time_correct, answer_correct (and the accuracies)."""
    stats = defaultdict(lambda: defaultdict(int))
    total = 0
    for entry in data:
        for question in entry["questions"]:
            if model not in question:
                continue
            ground_truth_timestamp = question["ground_truth_time_stamp"]
            ground_truth_time = sum(int(x) * 60 ** i for i, x in enumerate(reversed(ground_truth_timestamp.split(":"))))
            task_type = question["task_type"]
            model_answer = question.get(model, None)
            history = model_answer["dialog_history"]
            last_time = history[-1]["time"]
            lase_answer = history[-1]["content"]
            if model_answer:
                total += 1
                stats[f'{task_type}']["total"] += 1
                if -2 <= last_time - ground_truth_time <= 2:
                    stats[f'{task_type}']["time_correct"] += 1
                    if question["ground_truth_output"] in lase_answer:
                        stats[f'{task_type}']["answer_correct"] += 1
    for task_type, counts in stats.items():
        counts["time_accuracy"] = counts["time_correct"] / counts["total"] if counts["total"] > 0 else 0
        counts["answer_accuracy"] = counts["answer_correct"] / counts["total"] if counts["total"] > 0 else 0
    return {k: dict(v) for k, v in stats.items()}, total
