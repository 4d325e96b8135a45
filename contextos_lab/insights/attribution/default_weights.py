"""Weights of the default attributor: logistic regression of "this is the annotated
step" on the generic step features, fitted on all 126 Who&When Algorithm-Generated
runs by `benchmarks/failure_attribution.py --write-weights` (the benchmark's figures are
cross-validated: each run is scored by weights fitted without it). DEFAULT_TEMPERATURE is the
softmax temperature of these weights' candidate scores, fitted on the same runs
(`ranking.fit_temperature`)."""

DEFAULT_TEMPERATURE = 1.0368

DEFAULT_WEIGHTS: dict[str, float] = {
    "role_orchestrator": 0.0000,
    "role_user": 0.0000,
    "first_turn": -0.4665,
    "second_turn": 0.1289,
    "position": -2.0348,
    "first_turn_of_speaker": 0.2340,
    "same_speaker_as_previous": -0.2824,
    "issues_action": 0.0000,
    "action_fails": 0.5951,
    "last_actor_before_first_error": 0.4391,
    "before_first_error": -1.5443,
    "responds_to_error": -2.5906,
    "responds_to_tool_output": -1.3666,
    "first_actor_after_last_error": 2.8591,
    "run_has_error": 0.1424,
    "workaround_language": 0.6026,
    "has_code": 0.8447,
    "length": 1.8161,
    "terminate_only": -1.4394,
    "last_actor_before_first_flag": 3.9158,
    "repeats_previous_action": -0.4264,
    "task_turn_issues_action": 3.0950,
    "speaker_share": 0.0000,
    "unsupported_figures": 0.2259,
    "figures_reach_the_end": 0.6879,
    "first_write_call": 3.9158,
    "actor_rank_0": 0.0000,
    "actor_rank_1": -0.3907,
    "actor_rank_2": -0.0981,
    "actor_rank_3": -0.5449,
    "actor_rank": 0.0000,
    "first_code": 1.2207,
    "first_action": -1.2919,
    "first_failing_action": 0.7012,
    "first_figure_reaching_the_end": 0.9382,
    "first_workaround": 0.4010,
    "first_unsupported_figures": -3.9158,
    "first_turn_of_speaker_with_code": -0.2653,
    "verify_language": -0.2838,
    "hedge_language": 0.0250,
    "answer_language": 0.3967,
    "final_answer_share": 1.9793,
    "contradicted_soon_after": 1.1929,
}
