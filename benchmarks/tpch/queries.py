"""The 22 TPC-H queries written with the pandas API, one function each.

Each ``qN(t, pd)`` takes a dict of the eight tables (``t["lineitem"]``, ...)
as pandas, ``mars.dataframe`` or ``dask.dataframe`` frames and the matching
module as ``pd``, and returns the answer: a frame, or a scalar for the
queries whose SQL answer is one value (lazy for lazy engines). The same code
runs on every engine: it keeps to what they share (``merge``,
``groupby().agg`` with named aggregations, boolean masks, ``isin`` of literal
lists, ``str.startswith``/``contains``/``slice``, ``dt.year``,
``drop_duplicates``, ``sort_values``, ``head``, ``assign``, comparisons with
timestamps and with lazy scalars). Semi- and anti-joins (SQL's ``EXISTS``
and ``IN`` over a subquery) are merges, since ``isin`` of a lazy column is not
common to all three. Parameters are the specification's validation values;
``SCALE`` is read by Q11 only (its fraction is 0.0001 / SF).

A scalar sum over no rows is NaN, as SQL's NULL (``min_count=1``). Column
names are the SQL's output names, in its order; ``ORDER_BY`` gives the
columns of each query's ``ORDER BY`` (empty: any row order is right).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas

Tables = dict[str, Any]

#: the TPC-H scale factor of the data (Q11's threshold depends on it)
SCALE = 1.0


def day(text: str) -> pandas.Timestamp:
    """A date literal.

    >>> day("1998-12-01") - pandas.Timedelta(days=90)
    Timestamp('1998-09-02 00:00:00')
    """
    return pandas.Timestamp(text)


def revenue(df: Any) -> Any:
    """``l_extendedprice * (1 - l_discount)``."""
    return df.l_extendedprice * (1 - df.l_discount)


def q1(t: Tables, pd: Any) -> Any:
    li = t["lineitem"]
    li = li[li.l_shipdate <= day("1998-09-02")]
    li = li.assign(disc_price=revenue(li))
    li = li.assign(charge=li.disc_price * (1 + li.l_tax))
    out = li.groupby(["l_returnflag", "l_linestatus"]).agg(
        sum_qty=("l_quantity", "sum"), sum_base_price=("l_extendedprice", "sum"),
        sum_disc_price=("disc_price", "sum"), sum_charge=("charge", "sum"),
        avg_qty=("l_quantity", "mean"), avg_price=("l_extendedprice", "mean"),
        avg_disc=("l_discount", "mean"), count_order=("l_quantity", "count"))
    return out.reset_index().sort_values(["l_returnflag", "l_linestatus"])


def europe_partsupp(t: Tables) -> Any:
    """partsupp joined with its suppliers of region EUROPE (Q2's inner and outer query share it)."""
    region = t["region"]
    nation = t["nation"].merge(region[region.r_name == "EUROPE"], left_on="n_regionkey", right_on="r_regionkey")
    supplier = t["supplier"].merge(nation, left_on="s_nationkey", right_on="n_nationkey")
    return t["partsupp"].merge(supplier, left_on="ps_suppkey", right_on="s_suppkey")


def q2(t: Tables, pd: Any) -> Any:
    part = t["part"]
    part = part[(part.p_size == 15) & part.p_type.str.endswith("BRASS")]
    ps = europe_partsupp(t).merge(part, left_on="ps_partkey", right_on="p_partkey")
    # the subquery's minimum runs over the same European offers of each part
    cheapest = ps.groupby("ps_partkey").agg(min_cost=("ps_supplycost", "min")).reset_index()
    ps = ps.merge(cheapest, on="ps_partkey")
    ps = ps[ps.ps_supplycost == ps.min_cost]
    cols = ["s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone", "s_comment"]
    ps = ps.sort_values(["s_acctbal", "n_name", "s_name", "p_partkey"], ascending=[False, True, True, True])
    return ps[cols].head(100)


def q3(t: Tables, pd: Any) -> Any:
    c, o, li = t["customer"], t["orders"], t["lineitem"]
    c = c[c.c_mktsegment == "BUILDING"]
    o = o[o.o_orderdate < day("1995-03-15")]
    li = li[li.l_shipdate > day("1995-03-15")]
    j = c.merge(o, left_on="c_custkey", right_on="o_custkey").merge(li, left_on="o_orderkey", right_on="l_orderkey")
    j = j.assign(volume=revenue(j))
    out = j.groupby(["l_orderkey", "o_orderdate", "o_shippriority"]).agg(revenue=("volume", "sum")).reset_index()
    out = out.sort_values(["revenue", "o_orderdate"], ascending=[False, True]).head(10)
    return out[["l_orderkey", "revenue", "o_orderdate", "o_shippriority"]]


def q4(t: Tables, pd: Any) -> Any:
    o, li = t["orders"], t["lineitem"]
    o = o[(o.o_orderdate >= day("1993-07-01")) & (o.o_orderdate < day("1993-10-01"))]
    late = li[li.l_commitdate < li.l_receiptdate][["l_orderkey"]].drop_duplicates()
    j = o.merge(late, left_on="o_orderkey", right_on="l_orderkey")
    out = j.groupby("o_orderpriority").agg(order_count=("o_orderkey", "count")).reset_index()
    return out.sort_values("o_orderpriority")


def q5(t: Tables, pd: Any) -> Any:
    region = t["region"]
    nation = t["nation"].merge(region[region.r_name == "ASIA"], left_on="n_regionkey", right_on="r_regionkey")
    supplier = t["supplier"].merge(nation, left_on="s_nationkey", right_on="n_nationkey")
    o = t["orders"]
    o = o[(o.o_orderdate >= day("1994-01-01")) & (o.o_orderdate < day("1995-01-01"))]
    j = t["customer"].merge(o, left_on="c_custkey", right_on="o_custkey")
    j = j.merge(t["lineitem"], left_on="o_orderkey", right_on="l_orderkey")
    j = j.merge(supplier, left_on=["l_suppkey", "c_nationkey"], right_on=["s_suppkey", "s_nationkey"])
    j = j.assign(volume=revenue(j))
    out = j.groupby("n_name").agg(revenue=("volume", "sum")).reset_index()
    return out.sort_values("revenue", ascending=False)


def q6(t: Tables, pd: Any) -> Any:
    li = t["lineitem"]
    li = li[(li.l_shipdate >= day("1994-01-01")) & (li.l_shipdate < day("1995-01-01"))
            & (li.l_discount >= 0.05) & (li.l_discount <= 0.07) & (li.l_quantity < 24)]
    return (li.l_extendedprice * li.l_discount).sum(min_count=1)


def q7(t: Tables, pd: Any) -> Any:
    nation = t["nation"]
    pair = nation[nation.n_name.isin(["FRANCE", "GERMANY"])]
    supp_nation = pair[["n_nationkey", "n_name"]].rename(columns={"n_name": "supp_nation"})
    cust_nation = pair[["n_nationkey", "n_name"]].rename(columns={"n_name": "cust_nation"})
    li = t["lineitem"]
    li = li[(li.l_shipdate >= day("1995-01-01")) & (li.l_shipdate <= day("1996-12-31"))]
    s = t["supplier"].merge(supp_nation, left_on="s_nationkey", right_on="n_nationkey")
    c = t["customer"].merge(cust_nation, left_on="c_nationkey", right_on="n_nationkey")
    j = li.merge(s, left_on="l_suppkey", right_on="s_suppkey")
    j = j.merge(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
    j = j.merge(c, left_on="o_custkey", right_on="c_custkey")
    j = j[j.supp_nation != j.cust_nation]
    j = j.assign(l_year=j.l_shipdate.dt.year, volume=revenue(j))
    out = j.groupby(["supp_nation", "cust_nation", "l_year"]).agg(revenue=("volume", "sum")).reset_index()
    return out.sort_values(["supp_nation", "cust_nation", "l_year"])


def q8(t: Tables, pd: Any) -> Any:
    region = t["region"]
    america = t["nation"].merge(region[region.r_name == "AMERICA"], left_on="n_regionkey", right_on="r_regionkey")
    c = t["customer"].merge(america[["n_nationkey"]], left_on="c_nationkey", right_on="n_nationkey")
    part = t["part"]
    part = part[part.p_type == "ECONOMY ANODIZED STEEL"]
    o = t["orders"]
    o = o[(o.o_orderdate >= day("1995-01-01")) & (o.o_orderdate <= day("1996-12-31"))]
    s = t["supplier"].merge(t["nation"][["n_nationkey", "n_name"]], left_on="s_nationkey", right_on="n_nationkey")
    j = t["lineitem"].merge(part, left_on="l_partkey", right_on="p_partkey")
    j = j.merge(o, left_on="l_orderkey", right_on="o_orderkey")
    j = j.merge(c, left_on="o_custkey", right_on="c_custkey")
    j = j.merge(s, left_on="l_suppkey", right_on="s_suppkey")
    volume = revenue(j)
    j = j.assign(o_year=j.o_orderdate.dt.year, volume=volume, brazil=volume.where(j.n_name == "BRAZIL", 0.0))
    out = j.groupby("o_year").agg(brazil=("brazil", "sum"), volume=("volume", "sum")).reset_index()
    out = out.assign(mkt_share=out.brazil / out.volume)
    return out[["o_year", "mkt_share"]].sort_values("o_year")


def q9(t: Tables, pd: Any) -> Any:
    part = t["part"]
    part = part[part.p_name.str.contains("green", regex=False)]
    j = t["lineitem"].merge(part[["p_partkey"]], left_on="l_partkey", right_on="p_partkey")
    j = j.merge(t["partsupp"], left_on=["l_suppkey", "l_partkey"], right_on=["ps_suppkey", "ps_partkey"])
    s = t["supplier"].merge(t["nation"], left_on="s_nationkey", right_on="n_nationkey")
    j = j.merge(s, left_on="l_suppkey", right_on="s_suppkey")
    j = j.merge(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
    j = j.assign(nation=j.n_name, o_year=j.o_orderdate.dt.year,
                 amount=revenue(j) - j.ps_supplycost * j.l_quantity)
    out = j.groupby(["nation", "o_year"]).agg(sum_profit=("amount", "sum")).reset_index()
    return out.sort_values(["nation", "o_year"], ascending=[True, False])


def q10(t: Tables, pd: Any) -> Any:
    o, li = t["orders"], t["lineitem"]
    o = o[(o.o_orderdate >= day("1993-10-01")) & (o.o_orderdate < day("1994-01-01"))]
    li = li[li.l_returnflag == "R"]
    j = li.merge(o, left_on="l_orderkey", right_on="o_orderkey")
    j = j.assign(volume=revenue(j))
    # the SQL also groups by customer columns, which c_custkey determines: join them after grouping
    per_cust = j.groupby("o_custkey").agg(revenue=("volume", "sum")).reset_index()
    c = t["customer"].merge(t["nation"], left_on="c_nationkey", right_on="n_nationkey")
    out = per_cust.merge(c, left_on="o_custkey", right_on="c_custkey")
    out = out.sort_values(["revenue", "c_custkey"], ascending=[False, True]).head(20)
    return out[["c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment"]]


def q11(t: Tables, pd: Any) -> Any:
    nation = t["nation"]
    s = t["supplier"].merge(nation[nation.n_name == "GERMANY"], left_on="s_nationkey", right_on="n_nationkey")
    ps = t["partsupp"].merge(s, left_on="ps_suppkey", right_on="s_suppkey")
    ps = ps.assign(value=ps.ps_supplycost * ps.ps_availqty)
    threshold = ps.value.sum() * (0.0001 / SCALE)
    out = ps.groupby("ps_partkey").agg(value=("value", "sum")).reset_index()
    out = out[out.value > threshold]
    return out.sort_values("value", ascending=False)


def q12(t: Tables, pd: Any) -> Any:
    li = t["lineitem"]
    li = li[li.l_shipmode.isin(["MAIL", "SHIP"]) & (li.l_commitdate < li.l_receiptdate)
            & (li.l_shipdate < li.l_commitdate)
            & (li.l_receiptdate >= day("1994-01-01")) & (li.l_receiptdate < day("1995-01-01"))]
    j = li.merge(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
    high = j.o_orderpriority.isin(["1-URGENT", "2-HIGH"])
    j = j.assign(high_line_count=high.astype("int64"), low_line_count=(~high).astype("int64"))
    out = j.groupby("l_shipmode").agg(high_line_count=("high_line_count", "sum"),
                                      low_line_count=("low_line_count", "sum")).reset_index()
    return out.sort_values("l_shipmode")


def q13(t: Tables, pd: Any) -> Any:
    o = t["orders"]
    o = o[~o.o_comment.str.contains("special.*requests", regex=True)]
    j = t["customer"].merge(o, left_on="c_custkey", right_on="o_custkey", how="left")
    per_cust = j.groupby("c_custkey").agg(c_count=("o_orderkey", "count")).reset_index()
    out = per_cust.groupby("c_count").agg(custdist=("c_custkey", "count")).reset_index()
    return out.sort_values(["custdist", "c_count"], ascending=[False, False])


def q14(t: Tables, pd: Any) -> Any:
    li = t["lineitem"]
    li = li[(li.l_shipdate >= day("1995-09-01")) & (li.l_shipdate < day("1995-10-01"))]
    j = li.merge(t["part"], left_on="l_partkey", right_on="p_partkey")
    volume = revenue(j)
    promo = volume.where(j.p_type.str.startswith("PROMO"), 0.0)
    return 100.0 * promo.sum() / volume.sum()


def q15(t: Tables, pd: Any) -> Any:
    li = t["lineitem"]
    li = li[(li.l_shipdate >= day("1996-01-01")) & (li.l_shipdate < day("1996-04-01"))]
    li = li.assign(volume=revenue(li))
    rev = li.groupby("l_suppkey").agg(total_revenue=("volume", "sum")).reset_index()
    top = rev[rev.total_revenue == rev.total_revenue.max()]
    out = t["supplier"].merge(top, left_on="s_suppkey", right_on="l_suppkey")
    return out[["s_suppkey", "s_name", "s_address", "s_phone", "total_revenue"]].sort_values("s_suppkey")


def q16(t: Tables, pd: Any) -> Any:
    part = t["part"]
    part = part[(part.p_brand != "Brand#45") & ~part.p_type.str.startswith("MEDIUM POLISHED")
                & part.p_size.isin([49, 14, 23, 45, 19, 3, 36, 9])]
    s = t["supplier"]
    s = s.assign(complaint=s.s_comment.str.contains("Customer.*Complaints", regex=True))
    ps = t["partsupp"].merge(s[["s_suppkey", "complaint"]], left_on="ps_suppkey", right_on="s_suppkey")
    ps = ps[~ps.complaint]
    j = ps.merge(part, left_on="ps_partkey", right_on="p_partkey")
    j = j[["p_brand", "p_type", "p_size", "ps_suppkey"]].drop_duplicates()
    out = j.groupby(["p_brand", "p_type", "p_size"]).agg(supplier_cnt=("ps_suppkey", "count")).reset_index()
    return out.sort_values(["supplier_cnt", "p_brand", "p_type", "p_size"], ascending=[False, True, True, True])


def q17(t: Tables, pd: Any) -> Any:
    part = t["part"]
    part = part[(part.p_brand == "Brand#23") & (part.p_container == "MED BOX")]
    j = t["lineitem"].merge(part[["p_partkey"]], left_on="l_partkey", right_on="p_partkey")
    avg = j.groupby("l_partkey").agg(avg_qty=("l_quantity", "mean")).reset_index()
    j = j.merge(avg, on="l_partkey")
    j = j[j.l_quantity < 0.2 * j.avg_qty]
    return j.l_extendedprice.sum(min_count=1) / 7.0


def q18(t: Tables, pd: Any) -> Any:
    per_order = t["lineitem"].groupby("l_orderkey").agg(sum_qty=("l_quantity", "sum")).reset_index()
    big = per_order[per_order.sum_qty > 300]
    j = big.merge(t["orders"], left_on="l_orderkey", right_on="o_orderkey")
    j = j.merge(t["customer"], left_on="o_custkey", right_on="c_custkey")
    j = j.sort_values(["o_totalprice", "o_orderdate", "o_orderkey"], ascending=[False, True, True]).head(100)
    return j[["c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice", "sum_qty"]]


Q19_KINDS = [("Brand#12", ["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 1, 5),
             ("Brand#23", ["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10, 10),
             ("Brand#34", ["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 20, 15)]


def q19(t: Tables, pd: Any) -> Any:
    li = t["lineitem"]
    li = li[li.l_shipmode.isin(["AIR", "AIR REG"]) & (li.l_shipinstruct == "DELIVER IN PERSON")]
    j = li.merge(t["part"], left_on="l_partkey", right_on="p_partkey")
    keep = None
    for brand, containers, quantity, size in Q19_KINDS:
        one = ((j.p_brand == brand) & j.p_container.isin(containers) & (j.l_quantity >= quantity)
               & (j.l_quantity <= quantity + 10) & (j.p_size >= 1) & (j.p_size <= size))
        keep = one if keep is None else keep | one
    return revenue(j[keep]).sum(min_count=1)


def q20(t: Tables, pd: Any) -> Any:
    li = t["lineitem"]
    li = li[(li.l_shipdate >= day("1994-01-01")) & (li.l_shipdate < day("1995-01-01"))]
    # a column's sum, not a named aggregation: dask 2026.8 loses track of its shuffle keys through the
    # rename that a named aggregation adds, and the merge below then fails (KeyError on l_partkey)
    shipped = li.groupby(["l_partkey", "l_suppkey"])["l_quantity"].sum().reset_index()
    part = t["part"]
    part = part[part.p_name.str.startswith("forest")]
    ps = t["partsupp"].merge(part[["p_partkey"]], left_on="ps_partkey", right_on="p_partkey")
    ps = ps.merge(shipped, left_on=["ps_partkey", "ps_suppkey"], right_on=["l_partkey", "l_suppkey"])
    ps = ps[ps.ps_availqty > 0.5 * ps.l_quantity][["ps_suppkey"]].drop_duplicates()
    nation = t["nation"]
    s = t["supplier"].merge(nation[nation.n_name == "CANADA"], left_on="s_nationkey", right_on="n_nationkey")
    s = s.merge(ps, left_on="s_suppkey", right_on="ps_suppkey")
    return s[["s_name", "s_address"]].sort_values("s_name")


def q21(t: Tables, pd: Any) -> Any:
    li = t["lineitem"][["l_orderkey", "l_suppkey", "l_receiptdate", "l_commitdate"]]
    suppliers = li[["l_orderkey", "l_suppkey"]].drop_duplicates()
    n_supp = suppliers.groupby("l_orderkey").agg(n_supp=("l_suppkey", "count")).reset_index()
    late = li[li.l_receiptdate > li.l_commitdate][["l_orderkey", "l_suppkey"]]
    n_late = late.drop_duplicates().groupby("l_orderkey").agg(n_late=("l_suppkey", "count")).reset_index()
    nation = t["nation"]
    s = t["supplier"].merge(nation[nation.n_name == "SAUDI ARABIA"], left_on="s_nationkey", right_on="n_nationkey")
    o = t["orders"]
    o = o[o.o_orderstatus == "F"]
    j = late.merge(s, left_on="l_suppkey", right_on="s_suppkey")
    j = j.merge(o[["o_orderkey"]], left_on="l_orderkey", right_on="o_orderkey")
    # EXISTS another supplier on the order, NOT EXISTS another late supplier on it
    j = j.merge(n_supp, on="l_orderkey").merge(n_late, on="l_orderkey")
    j = j[(j.n_supp > 1) & (j.n_late == 1)]
    out = j.groupby("s_name").agg(numwait=("l_orderkey", "count")).reset_index()
    return out.sort_values(["numwait", "s_name"], ascending=[False, True]).head(100)


def q22(t: Tables, pd: Any) -> Any:
    c = t["customer"]
    c = c.assign(cntrycode=c.c_phone.str.slice(0, 2))
    c = c[c.cntrycode.isin(["13", "31", "23", "29", "30", "18", "17"])]
    avg = c[c.c_acctbal > 0.0].c_acctbal.mean()
    c = c[c.c_acctbal > avg]
    with_orders = t["orders"][["o_custkey"]].drop_duplicates()
    c = c.merge(with_orders, left_on="c_custkey", right_on="o_custkey", how="left")
    c = c[c.o_custkey.isna()]
    out = c.groupby("cntrycode").agg(numcust=("c_custkey", "count"), totacctbal=("c_acctbal", "sum")).reset_index()
    return out.sort_values("cntrycode")


QUERIES: dict[int, Callable[[Tables, Any], Any]] = {
    n: globals()[f"q{n}"] for n in range(1, 23)}

#: the result columns each query's ORDER BY sorts on (ties among them may come in any order)
ORDER_BY: dict[int, list[str]] = {
    1: ["l_returnflag", "l_linestatus"], 2: ["s_acctbal", "n_name", "s_name", "p_partkey"],
    3: ["revenue", "o_orderdate"], 4: ["o_orderpriority"], 5: ["revenue"], 6: [],
    7: ["supp_nation", "cust_nation", "l_year"], 8: ["o_year"], 9: ["nation", "o_year"], 10: ["revenue"],
    11: ["value"], 12: ["l_shipmode"], 13: ["custdist", "c_count"], 14: [], 15: ["s_suppkey"],
    16: ["supplier_cnt", "p_brand", "p_type", "p_size"], 17: [], 18: ["o_totalprice", "o_orderdate"],
    19: [], 20: ["s_name"], 21: ["numwait", "s_name"], 22: ["cntrycode"],
}

#: the tables each query reads
TABLES_USED: dict[int, tuple[str, ...]] = {
    1: ("lineitem",), 2: ("part", "partsupp", "supplier", "nation", "region"),
    3: ("customer", "orders", "lineitem"), 4: ("orders", "lineitem"),
    5: ("customer", "orders", "lineitem", "supplier", "nation", "region"), 6: ("lineitem",),
    7: ("supplier", "lineitem", "orders", "customer", "nation"),
    8: ("part", "supplier", "lineitem", "orders", "customer", "nation", "region"),
    9: ("part", "supplier", "lineitem", "partsupp", "orders", "nation"),
    10: ("customer", "orders", "lineitem", "nation"), 11: ("partsupp", "supplier", "nation"),
    12: ("orders", "lineitem"), 13: ("customer", "orders"), 14: ("lineitem", "part"),
    15: ("lineitem", "supplier"), 16: ("partsupp", "part", "supplier"), 17: ("lineitem", "part"),
    18: ("customer", "orders", "lineitem"), 19: ("lineitem", "part"),
    20: ("supplier", "nation", "partsupp", "part", "lineitem"),
    21: ("supplier", "lineitem", "orders", "nation"), 22: ("customer", "orders"),
}
