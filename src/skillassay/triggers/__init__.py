"""Trigger evals: does the skill's description make the agent load it (`skillassay triggers`),
and can a better description be found without fooling ourselves (`optimize-description`)?"""

from skillassay.triggers.measure import TriggerRequest, measure_triggers

__all__ = ["TriggerRequest", "measure_triggers"]
