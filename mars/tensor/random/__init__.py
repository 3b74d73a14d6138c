"""mt.random: numpy's ``np.random`` functions, making random tensors.

The module functions are methods of one module-level :class:`RandomState`;
``seed(n)`` reseeds it, so the tensors made after it are reproducible.

>>> import mars.tensor as mt
>>> mt.random.seed(0)
>>> a = mt.random.rand(3, chunk_size=2)
>>> mt.random.seed(0)
>>> b = mt.random.rand(3, chunk_size=2)
>>> bool((a.execute().fetch() == b.execute().fetch()).all())
True
"""

from __future__ import annotations

from .state import RandomState

__all__ = [
    "RandomState", "seed", "rand", "randn", "randint", "random", "random_sample", "ranf", "sample", "uniform",
    "normal", "standard_normal", "poisson", "binomial", "exponential", "standard_exponential", "beta", "gamma",
    "standard_gamma", "lognormal", "laplace", "logistic", "gumbel", "geometric", "chisquare", "standard_t",
    "standard_cauchy", "pareto", "weibull", "rayleigh", "negative_binomial", "triangular", "zipf", "choice",
    "permutation",
]

_state = RandomState()

seed = _state.seed
rand = _state.rand
randn = _state.randn
randint = _state.randint
random = _state.random
random_sample = _state.random_sample
ranf = _state.ranf
sample = _state.sample
uniform = _state.uniform
normal = _state.normal
standard_normal = _state.standard_normal
poisson = _state.poisson
binomial = _state.binomial
exponential = _state.exponential
standard_exponential = _state.standard_exponential
beta = _state.beta
gamma = _state.gamma
standard_gamma = _state.standard_gamma
lognormal = _state.lognormal
laplace = _state.laplace
logistic = _state.logistic
gumbel = _state.gumbel
geometric = _state.geometric
chisquare = _state.chisquare
standard_t = _state.standard_t
standard_cauchy = _state.standard_cauchy
pareto = _state.pareto
weibull = _state.weibull
rayleigh = _state.rayleigh
negative_binomial = _state.negative_binomial
triangular = _state.triangular
zipf = _state.zipf
choice = _state.choice
permutation = _state.permutation
