"""Weights of the default attributor: logistic regression of "this is the annotated
step" on the generic step features, fitted on all 126 Who&When Algorithm-Generated
runs by `benchmarks/failure_attribution.py --write-weights` (the benchmark's figures are
cross-validated: each run is scored by weights fitted without it)."""

DEFAULT_WEIGHTS: dict[str, float] = {
    "role_orchestrator": 0.0000,
    "role_user": 0.0000,
    "first_turn": -0.8100,
    "second_turn": 0.8051,
    "position": -0.5084,
    "first_turn_of_speaker": 0.1310,
    "same_speaker_as_previous": 0.1024,
    "issues_action": -0.2063,
    "action_fails": 0.2558,
    "last_actor_before_first_error": 1.0845,
    "before_first_error": -0.7780,
    "responds_to_error": -1.2662,
    "first_actor_after_last_error": 0.9904,
    "run_has_error": -0.1025,
    "workaround_language": 0.6719,
    "has_code": 0.7108,
    "length": 0.7938,
    "terminate_only": -1.2066,
    "last_actor_before_first_flag": 2.0000,
    "repeats_previous_action": -0.4276,
    "task_turn_issues_action": 1.6716,
    "speaker_share": 0.0260,
    "unsupported_figures": 0.1200,
    "figures_reach_the_end": 0.6931,
    "first_write_call": 2.0000,
}
