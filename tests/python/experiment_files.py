"""Small experiment files for tests that run svqa end to end on a tiny export."""


def write_experiment(path, name, export, annotations, benchmark="stream_list", retrieval="{type: full_context}",
                     encoding="{type: rekv_sliding_window}", stream="{fps: 2, max_new_tokens: 2}"):
    """EXP.yaml running `export` on `annotations` (a stream_list file unless `benchmark` says otherwise)."""
    path.write_text(f"""
name: {name}
backbone: {{type: torchscript, options: {{export: {export}}}}}
encoding: {encoding}
retrieval: {retrieval}
benchmark: {{type: {benchmark}, options: {{annotations: {annotations}}}}}
stream: {stream}
""")
    return path
