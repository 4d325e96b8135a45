"""Weights of the default attributor: logistic regression of "this is the annotated
step" on the generic step features, fitted on all 126 Who&When Algorithm-Generated
runs by `benchmarks/failure_attribution.py --write-weights` (the benchmark's figures are
cross-validated: each run is scored by weights fitted without it).
DEFAULT_TEMPERATURE is the softmax temperature of these weights' candidate scores,
fitted on the inner cross-validation's out-of-fold scores of the same runs
(`fitting.fit_model`)."""

DEFAULT_TEMPERATURE = 1.4140

DEFAULT_WEIGHTS: dict[str, float] = {
    "role_orchestrator": 0.0000,
    "role_user": 0.0000,
    "first_turn": -0.2847,
    "second_turn": 0.1416,
    "position": -2.4473,
    "first_turn_of_speaker": 0.2671,
    "same_speaker_as_previous": -0.2457,
    "issues_action": 0.0000,
    "action_fails": 0.5879,
    "last_actor_before_first_error": 0.0126,
    "before_first_error": -1.5487,
    "responds_to_error": -2.6221,
    "responds_to_tool_output": -1.2987,
    "first_actor_after_last_error": 2.8914,
    "run_has_error": 0.1204,
    "workaround_language": 0.6198,
    "has_code": 0.8896,
    "length": 1.9318,
    "terminate_only": -1.2065,
    "last_actor_before_first_flag": 3.9406,
    "repeats_previous_action": -0.4416,
    "task_turn_issues_action": 3.1227,
    "speaker_share": 0.0000,
    "unsupported_figures": 0.2141,
    "figures_reach_the_end": 0.6721,
    "first_write_call": 3.9406,
    "actor_rank_0": -0.2378,
    "actor_rank_1": -0.4533,
    "actor_rank_2": -0.1235,
    "actor_rank_3": -0.5402,
    "actor_rank": 0.3156,
    "first_code": 1.2220,
    "first_action": -1.3179,
    "first_failing_action": 1.1379,
    "first_figure_reaching_the_end": 0.9698,
    "first_workaround": 0.3873,
    "first_unsupported_figures": -3.9406,
    "first_turn_of_speaker_with_code": -0.2992,
    "verify_language": -0.2599,
    "hedge_language": 0.0135,
    "answer_language": 0.4192,
    "final_answer_share": 2.0880,
    "contradicted_soon_after": 1.1895,
    "requester_ends_without_effect": 3.9406,
}
