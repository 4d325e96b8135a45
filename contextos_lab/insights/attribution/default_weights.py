"""Weights of the default attributor: logistic regression of "this is the annotated
step" on the generic step features, fitted on all 126 Who&When Algorithm-Generated
runs by `benchmarks/failure_attribution.py --write-weights` (the benchmark's figures are
cross-validated: each run is scored by weights fitted without it).
DEFAULT_TEMPERATURE is the softmax temperature of these weights' candidate scores,
fitted on the inner cross-validation's out-of-fold scores of the same runs
(`linear.fit_model`)."""

DEFAULT_TEMPERATURE = 1.4140

DEFAULT_WEIGHTS: dict[str, float] = {
    "role_orchestrator": 0.0000,
    "role_user": 0.0000,
    "first_turn": -0.3968,
    "second_turn": 0.1415,
    "position": -2.4457,
    "first_turn_of_speaker": 0.2670,
    "same_speaker_as_previous": -0.2455,
    "issues_action": 0.0000,
    "action_fails": 0.5881,
    "last_actor_before_first_error": 0.2837,
    "before_first_error": -1.5486,
    "responds_to_error": -2.6219,
    "responds_to_tool_output": -1.2990,
    "first_actor_after_last_error": 2.8915,
    "run_has_error": 0.1203,
    "workaround_language": 0.6197,
    "has_code": 0.8896,
    "length": 1.9370,
    "terminate_only": -1.2049,
    "last_actor_before_first_flag": 3.9406,
    "repeats_previous_action": -0.4424,
    "task_turn_issues_action": 3.1229,
    "speaker_share": 0.0000,
    "unsupported_figures": 0.2134,
    "figures_reach_the_end": 0.6721,
    "first_write_call": 3.9406,
    "actor_rank_0": -0.1249,
    "actor_rank_1": -0.4522,
    "actor_rank_2": -0.1228,
    "actor_rank_3": -0.5398,
    "actor_rank": 0.3155,
    "first_code": 1.2221,
    "first_action": -1.3180,
    "first_failing_action": 0.8667,
    "first_figure_reaching_the_end": 0.9703,
    "first_workaround": 0.3874,
    "first_unsupported_figures": -3.9406,
    "first_turn_of_speaker_with_code": -0.2995,
    "verify_language": -0.2599,
    "hedge_language": 0.0133,
    "answer_language": 0.4192,
    "final_answer_share": 2.0881,
    "contradicted_soon_after": 1.1894,
}
