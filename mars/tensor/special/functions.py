"""``mt.special.<name>``: scipy.special's elementwise functions, lazily over tensors.

The table below lists them by family; each name becomes a function that
builds a :class:`~.core.TensorScipyElementwise` (or the multi-output op for
``fresnel``, ``airy`` and the like, which return a tuple of tensors).
Arguments, dtypes, broadcasting and errors are scipy's.

>>> import mars.tensor as mt
>>> s, c = mt.special.fresnel(mt.tensor([0.0, 1.0], chunk_size=1))
>>> c.execute().fetch().round(4)
array([0.    , 0.7799])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .core import apply_scipy

_FAMILIES: dict[str, list[str]] = {
    "error function and Fresnel integrals": [
        "erf", "erfc", "erfcx", "erfi", "erfinv", "erfcinv", "wofz", "dawsn", "fresnel", "modfresnelp",
        "modfresnelm", "voigt_profile",
    ],
    "gamma and related": [
        "gamma", "gammaln", "loggamma", "gammasgn", "gammainc", "gammaincinv", "gammaincc", "gammainccinv",
        "beta", "betaln", "betainc", "betaincc", "betaincinv", "betainccinv", "psi", "digamma", "polygamma",
        "multigammaln", "rgamma", "poch",
    ],
    "convenience": [
        "xlogy", "xlog1py", "logit", "expit", "log_expit", "exprel", "cbrt", "exp10", "exp2", "expm1", "log1p",
        "cosm1", "round", "boxcox", "boxcox1p", "inv_boxcox", "inv_boxcox1p", "radian", "cosdg", "sindg",
        "tandg", "cotdg", "powm1",
    ],
    "information theory": ["entr", "rel_entr", "kl_div", "huber", "pseudo_huber"],
    "zeta": ["zeta", "zetac"],
    "Bessel": [
        "jv", "jve", "yn", "yv", "yve", "kn", "kv", "kve", "iv", "ive", "hankel1", "hankel1e", "hankel2",
        "hankel2e", "j0", "j1", "y0", "y1", "i0", "i0e", "i1", "i1e", "k0", "k0e", "k1", "k1e", "spherical_jn",
        "spherical_yn", "spherical_in", "spherical_kn", "wright_bessel", "struve", "modstruve",
    ],
    "hypergeometric": ["hyp2f1", "hyp1f1", "hyperu", "hyp0f1"],
    "elliptic": [
        "ellipk", "ellipkm1", "ellipkinc", "ellipe", "ellipeinc", "ellipj", "elliprc", "elliprd", "elliprf",
        "elliprg", "elliprj",
    ],
    "Airy and integrals": ["airy", "airye", "itairy", "sici", "shichi"],
    "spherical harmonics": ["sph_harm_y"],
    "distributions": [
        "ndtr", "ndtri", "ndtri_exp", "log_ndtr", "bdtr", "bdtrc", "bdtri", "bdtrik", "bdtrin", "chdtr", "chdtrc",
        "chdtri", "chdtriv", "fdtr", "fdtrc", "fdtri", "fdtridfd", "gdtr", "gdtrc", "gdtria", "gdtrib", "gdtrix",
        "nbdtr", "nbdtrc", "nbdtri", "pdtr", "pdtrc", "pdtri", "pdtrik", "stdtr", "stdtridf", "stdtrit", "smirnov",
        "smirnovi", "kolmogorov", "kolmogi", "owens_t", "chndtr", "chndtrix", "chndtridf", "chndtrinc", "nctdtr",
        "nrdtrimn", "nrdtrisd", "btdtria", "btdtrib", "tklmbda",
    ],
}

NAMES = [name for names in _FAMILIES.values() for name in names]


def _make(name: str) -> Callable[..., Any]:
    def special_function(*args: Any, **kwargs: Any) -> Any:
        return apply_scipy(f"special.{name}", *args, **kwargs)

    special_function.__name__ = special_function.__qualname__ = name
    special_function.__doc__ = (
        f"Lazy ``scipy.special.{name}`` over tensors (scipy's arguments, broadcasting, dtypes and errors)."
    )
    return special_function


for _name in NAMES:
    globals()[_name] = _make(_name)

__all__ = list(NAMES)
