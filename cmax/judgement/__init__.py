"""The judgement layer: what each claim a rating rests on amounts to, decided once.

Score, gates, tier, price and every report read these judgements; none decides a claim's
state again. Each module judges one kind of claim (``exemplar``: the Exemplar suite). The
package imports nothing at load time, so the scorecard models may import it.
"""
