"""PBS's production latency fits as WARS message laws (times in ms).

Source: Bailis, Venkataraman, Franklin, Hellerstein, Stoica, "Probabilistically
Bounded Staleness for Practical Partial Quorums", PVLDB 5(8), 2012, Table 3
("Distribution fits for production latency distributions from LinkedIn (LNKD-*)
and Yammer (YMMR)") and Section 5.5 (the WAN scenario; section numbers of the authors' LaTeX source). Every fit is a mixture of
a Pareto body (scale x_m, shape alpha: P(X > x) = (x_m / x)**alpha for x >= x_m)
and an exponential tail (rate lambda), with the table's weights:

- LNKD-SSD: W = A = R = S = 91.22% Pareto(x_m=.235, alpha=10) + 8.78% Exp(1.66)
- LNKD-DISK: W = 38% Pareto(1.05, 1.51) + 62% Exp(.183); A = R = S as LNKD-SSD
- YMMR: W = 93.9% Pareto(3, 3.35) + 6.1% Exp(.0028);
  A = R = S = 98.2% Pareto(1.5, 3.8) + 1.8% Exp(.0217)
- WAN: LNKD-DISK delays, plus 75 ms each way for every replica outside the
  operation's own data centre (one local replica per operation, chosen at random)

The synthetic sweep of Section 5.3 (Figure 4): W exponential of rate
``write_rate``, A = R = S exponential of rate 1 (mean 1 ms), ``exponential_profile``.

Note: the authors' published simulator draws YMMR's write Pareto with alpha = 3.5,
not the table's 3.35; this module follows the table.
"""

from __future__ import annotations

from scipy import stats

from forkjoin_sim.errors import ConfigError
from forkjoin_sim.laws.mixture import Mixture
from forkjoin_sim.staleness.wars import MessageLaws


def pareto(scale: float, alpha: float):
    """The Pareto (type I) law with minimum ``scale`` (x_m) and shape ``alpha``."""
    return stats.pareto(alpha, scale=scale)


def exponential(rate: float):
    """The exponential law of rate ``rate`` (mean 1 / rate)."""
    return stats.expon(scale=1.0 / rate)


#: LNKD-SSD one-way delay, every message type (Table 3).
LNKD_SSD_ONE_WAY = Mixture([pareto(0.235, 10), exponential(1.66)], [0.9122, 0.0878])
#: LNKD-DISK write propagation W (Table 3).
LNKD_DISK_WRITE = Mixture([pareto(1.05, 1.51), exponential(0.183)], [0.38, 0.62])
#: YMMR write propagation W (Table 3).
YMMR_WRITE = Mixture([pareto(3.0, 3.35), exponential(0.0028)], [0.939, 0.061])
#: YMMR ack, read request and read response A = R = S (Table 3).
YMMR_ONE_WAY = Mixture([pareto(1.5, 3.8), exponential(0.0217)], [0.982, 0.018])
#: One-way delay added to messages to or from another data centre in WAN (ms).
WAN_DELAY = 75.0

PROFILES = {
    "LNKD-SSD": MessageLaws(LNKD_SSD_ONE_WAY, LNKD_SSD_ONE_WAY, LNKD_SSD_ONE_WAY,
                            LNKD_SSD_ONE_WAY, name="LNKD-SSD"),
    "LNKD-DISK": MessageLaws(LNKD_DISK_WRITE, LNKD_SSD_ONE_WAY, LNKD_SSD_ONE_WAY,
                             LNKD_SSD_ONE_WAY, name="LNKD-DISK"),
    "YMMR": MessageLaws(YMMR_WRITE, YMMR_ONE_WAY, YMMR_ONE_WAY, YMMR_ONE_WAY,
                        name="YMMR"),
    "WAN": MessageLaws(LNKD_DISK_WRITE, LNKD_SSD_ONE_WAY, LNKD_SSD_ONE_WAY,
                       LNKD_SSD_ONE_WAY, remote_delay=WAN_DELAY, name="WAN"),
}


def profile(name: str) -> MessageLaws:
    """The WARS laws of PBS's production profile ``name`` (case-insensitive)."""
    key = str(name).strip().upper()
    if key not in PROFILES:
        raise ConfigError(f"latency profile {name!r} is unknown; use one of "
                          f"{', '.join(PROFILES)}")
    return PROFILES[key]


def exponential_profile(write_rate: float, other_rate: float = 1.0) -> MessageLaws:
    """PBS's synthetic sweep (Section 5.3): W ~ Exp(write_rate), A = R = S ~
    Exp(other_rate)."""
    for label, rate in (("write_rate", write_rate), ("other_rate", other_rate)):
        if not (isinstance(rate, (int, float)) and 0 < rate < float("inf")):
            raise ConfigError(f"{label}={rate!r}; give a positive finite rate (1/ms)")
    other = exponential(other_rate)
    return MessageLaws(exponential(write_rate), other, other, other,
                       name=f"EXP-W{write_rate:g}")
