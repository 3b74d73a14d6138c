"""mt.random: numpy's ``np.random`` functions, making random tensors.

The module functions are methods of one module-level :class:`RandomState`;
``seed(n)`` reseeds it, so the tensors made after it are reproducible.
``default_rng(seed)`` gives a :class:`Generator` with numpy's Generator API;
numpy's bit generators and ``SeedSequence`` are here to seed one.

>>> import mars.tensor as mt
>>> mt.random.seed(0)
>>> a = mt.random.rand(3, chunk_size=2)
>>> mt.random.seed(0)
>>> b = mt.random.rand(3, chunk_size=2)
>>> bool((a.execute().fetch() == b.execute().fetch()).all())
True
"""

from __future__ import annotations

import numpy as np
from numpy.random import MT19937, PCG64, PCG64DXSM, SFC64, BitGenerator, Philox, SeedSequence  # seed Generators

from ..leftout import module_getattr
from .generator import Generator, default_rng
from .state import RandomState

__all__ = [
    "RandomState", "seed", "rand", "randn", "randint", "random", "random_sample", "ranf", "sample", "uniform",
    "normal", "standard_normal", "poisson", "binomial", "exponential", "standard_exponential", "beta", "gamma",
    "standard_gamma", "lognormal", "laplace", "logistic", "gumbel", "geometric", "chisquare", "standard_t",
    "standard_cauchy", "pareto", "weibull", "rayleigh", "negative_binomial", "triangular", "zipf", "choice",
    "permutation", "shuffle", "dirichlet", "multinomial", "multivariate_normal", "f", "hypergeometric", "logseries",
    "noncentral_chisquare", "noncentral_f", "power", "vonmises", "wald", "bytes", "random_integers",
    "get_state", "set_state", "get_bit_generator", "set_bit_generator", "Generator", "default_rng",
    "BitGenerator", "MT19937", "PCG64", "PCG64DXSM", "Philox", "SFC64", "SeedSequence",
]

_state = RandomState()
__getattr__ = module_getattr("random", __name__)  # numpy.random's left-out names raise, saying what to use


def get_bit_generator() -> np.random.BitGenerator:
    """The bit generator that the module functions draw their tensors' seeds from, as
    ``np.random.get_bit_generator``.

    >>> import mars.tensor as mt
    >>> isinstance(mt.random.get_bit_generator(), mt.random.BitGenerator)
    True
    """
    return _state._bit_generator


def set_bit_generator(bitgen: np.random.BitGenerator) -> None:
    """Make the module functions draw their tensors' seeds from ``bitgen``, as ``np.random.set_bit_generator``."""
    _state._set_bit_generator(bitgen)


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
shuffle = _state.shuffle
dirichlet = _state.dirichlet
multinomial = _state.multinomial
multivariate_normal = _state.multivariate_normal
f = _state.f
hypergeometric = _state.hypergeometric
logseries = _state.logseries
noncentral_chisquare = _state.noncentral_chisquare
noncentral_f = _state.noncentral_f
power = _state.power
vonmises = _state.vonmises
wald = _state.wald
bytes = _state.bytes
random_integers = _state.random_integers
get_state = _state.get_state
set_state = _state.set_state
