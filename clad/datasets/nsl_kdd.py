"""NSL-KDD from its original text files, with concepts by attack family or by protocol.

Files (in ``<data dir>/nsl-kdd/``, see the ``nsl-kdd`` dataset card): ``KDDTrain+_20Percent.txt`` and
``KDDTest+.txt`` (CSV without header: 41 features, the attack name, a difficulty score),
``field-names.csv`` (feature names) and ``attack-types.csv`` (attack -> family, CR-only line
endings). 17 attacks occur only in the test file and are missing from ``attack-types.csv``; they are
mapped to their families by the standard mapping (:data:`TEST_ONLY_ATTACKS`).

Features (``preprocessing``):

``"clad"``       (default) the symbolic columns (``protocol_type``, ``service``, ``flag``) one-hot or
                 ordinal encoded (``encoding``) and the numeric columns scaled (``scaling``: min-max or
                 standard), every transform fitted on the training file only (scikit-learn
                 ``ColumnTransformer``; symbolic columns first).
``"faber2024"``  the preprocessing of the scenarios published by Faber et al. (IEEE Access 2024; the
                 protocol guide, ``docs/guides/protocol.md``); ``encoding`` and ``scaling`` stay at
                 their defaults.

Concepts (``concepts``):

``"family"``    one concept per attack family (dos, probe, r2l, u2r), whose test anomalies are that
                family's attacks. Normal traffic is split into as many parts by ``normal_by``:
                ``"service"`` (each service wholly in one part; services dealt, most frequent first,
                to the part with the fewest training rows, so parts are about equal and each is its
                own set of services; a service unseen in training goes to the last part) or
                ``"random"`` (a seeded random equal split).
``"protocol"``  one concept per protocol (icmp, tcp, udp): its normal traffic, and in the test set
                every attack on that protocol.
``"faber2024"`` the rows of both files pooled (as the published scenarios did) and cut into concepts by
                the published generator (:mod:`clad.datasets.faber`; how pyCLAD's NSL-KDD concept
                file was made: the protocol guide).

Training concepts come from the training file and test concepts from the test file, except with
``concepts="faber2024"``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.concepts import Concept
from ..errors import CladValueError, DataError
from ..validation import COUNT, StrOptions, declare
from . import _checks
from .build import SPLIT_CONSTRAINTS, order_concepts
from .files import locate

__all__ = ["load_nsl_kdd", "read_nsl_kdd", "attack_families", "TEST_ONLY_ATTACKS", "FAMILIES"]

FOLDER = "nsl-kdd"
#: the files the loader reads inside FOLDER
FILES = ("attack-types.csv", "field-names.csv", "KDDTrain+_20Percent.txt", "KDDTest+.txt")
FAMILIES = ("dos", "probe", "r2l", "u2r")
SYMBOLIC = ("protocol_type", "service", "flag")
#: families of the 17 attacks that occur only in KDDTest+ (the standard NSL-KDD mapping)
TEST_ONLY_ATTACKS = {
    **dict.fromkeys(("apache2", "mailbomb", "processtable", "udpstorm"), "dos"),
    **dict.fromkeys(("mscan", "saint"), "probe"),
    **dict.fromkeys(("httptunnel", "named", "sendmail", "snmpgetattack", "snmpguess"), "r2l"),
    **dict.fromkeys(("worm", "xlock", "xsnoop"), "r2l"),
    **dict.fromkeys(("ps", "sqlattack", "xterm"), "u2r"),
}


def attack_families(data_dir: str | None = None) -> dict[str, str]:
    """attack name -> family, from ``attack-types.csv`` (CR-only line endings) plus the test-only attacks."""
    text = locate(f"{FOLDER}/attack-types.csv", data_dir).read_bytes().decode("utf-8")
    mapping = {}
    for line in text.splitlines():  # splits on \r, \n and \r\n alike
        if line.strip():
            attack, _, family = line.partition(",")
            mapping[attack.strip()] = family.strip()
    for attack, family in TEST_ONLY_ATTACKS.items():
        mapping.setdefault(attack, family)
    return mapping


def read_nsl_kdd(data_dir: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The raw training and test tables: 41 named feature columns, ``attack``, ``difficulty``, ``family``."""
    names = (
        pd.read_csv(locate(f"{FOLDER}/field-names.csv", data_dir), header=None)[0]
        .str.strip()
        .tolist()
    )
    if len(names) != 41:
        raise DataError(f"nsl_kdd: field-names.csv lists {len(names)} fields; expected 41")
    columns = names + ["attack", "difficulty"]
    families = attack_families(data_dir)
    frames = []
    for fname in ("KDDTrain+_20Percent.txt", "KDDTest+.txt"):
        df = pd.read_csv(locate(f"{FOLDER}/{fname}", data_dir), header=None, names=columns)
        unknown = sorted(set(df["attack"]) - set(families))
        if unknown:
            raise DataError(f"nsl_kdd: {fname} has attacks with no known family: {unknown}")
        df["family"] = df["attack"].map(families)
        frames.append(df)
    return frames[0], frames[1]


def _encoder(encoding: str, scaling: str, numeric: list[str]):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, OrdinalEncoder, StandardScaler

    scaler = {"minmax": MinMaxScaler, "standard": StandardScaler}.get(scaling)
    if encoding == "onehot":
        sym = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
    else:
        sym = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
        if scaler is not None:
            sym = make_pipeline(sym, scaler())
    num = scaler() if scaler is not None else "passthrough"
    return ColumnTransformer([("symbolic", sym, list(SYMBOLIC)), ("numeric", num, numeric)])


def _published_features(
    train_df: pd.DataFrame, test_df: pd.DataFrame
) -> tuple[np.ndarray, list[str]]:
    """Both files' 41 features as the published scenarios prepared them (the protocol guide)."""
    from sklearn.preprocessing import MinMaxScaler, OrdinalEncoder

    features = pd.concat([train_df.iloc[:, :41], test_df.iloc[:, :41]], ignore_index=True)
    for col in SYMBOLIC:
        features[col] = OrdinalEncoder().fit_transform(features[[col]].to_numpy())[:, 0]
    return MinMaxScaler().fit_transform(features.to_numpy(dtype=np.float64)), [
        str(c) for c in features.columns
    ]


def _service_parts(train_normal: pd.Series, k: int) -> dict[str, int]:
    counts = train_normal.value_counts(sort=False)
    counts = counts.iloc[np.lexsort((counts.index.to_numpy(dtype=str), -counts.to_numpy()))]
    sizes = np.zeros(k, dtype=np.int64)
    part = {}
    for service, n in counts.items():
        i = int(np.argmin(sizes))
        part[service] = i
        sizes[i] += n
    return part


def _features(train_df, test_df, preprocessing: str, encoding: str, scaling: str):
    """``(X_train, X_test, feature names)`` by ``preprocessing`` (see the module docstring)."""
    if preprocessing == "faber2024":
        if (encoding, scaling) != ("onehot", "minmax"):
            raise CladValueError(
                f"nsl_kdd: encoding={encoding!r}, scaling={scaling!r} with "
                "preprocessing='faber2024', which fixes both (ordinal codes, then min-max over "
                "both files); leave encoding and scaling at their defaults"
            )
        X, names = _published_features(train_df, test_df)
        return X[: len(train_df)], X[len(train_df) :], names
    numeric = [c for c in train_df.columns[:41] if c not in SYMBOLIC]
    enc = _encoder(encoding, scaling, numeric).fit(train_df[list(SYMBOLIC) + numeric])
    X_train = enc.transform(train_df[list(SYMBOLIC) + numeric]).astype(np.float64)
    X_test = enc.transform(test_df[list(SYMBOLIC) + numeric]).astype(np.float64)
    return X_train, X_test, [str(n) for n in enc.get_feature_names_out()]


@declare(
    {
        **SPLIT_CONSTRAINTS,
        "concepts": [StrOptions(("family", "protocol", "faber2024"))],
        "normal_by": [StrOptions(("service", "random"))],
        "encoding": [StrOptions(("onehot", "ordinal"))],
        "scaling": [StrOptions(("minmax", "standard", "none"))],
        "preprocessing": [StrOptions(("clad", "faber2024"))],
        "n_concepts": [COUNT],
        "size_per_concept": [COUNT],
        "kmeans_random_state": _checks.SEEDS,
    },
    files=lambda a: [(f"{FOLDER}/{f}", None) for f in FILES],
)
def load_nsl_kdd(
    concepts: str = "family",
    normal_by: str = "service",
    encoding: str = "onehot",
    scaling: str = "minmax",
    contamination: float = 0.0,
    order: str = "given",
    difficulty: str = "iforest_auc",
    data_dir: str | None = None,
    random_state: int = 0,
    preprocessing: str = "clad",
    n_concepts: int = 5,
    size_per_concept: int = 1000,
    assignment: str = "random",
    kmeans_random_state: int = 42,
    anomaly_shuffle: str = "permutation",
):
    """NSL-KDD as a continual scenario (see the module docstring for every choice).

    ``contamination`` (default 0) moves that share of training rows' worth of the concept's
    training-file anomalies into its training data; ``order`` and ``difficulty`` are those of
    :mod:`clad.datasets.build`. ``n_concepts``, ``size_per_concept``, ``assignment``,
    ``kmeans_random_state`` and ``anomaly_shuffle`` are for ``concepts="faber2024"`` only.
    """
    loader = "nsl_kdd"
    seed = int(random_state)
    split_ss, contam_ss, order_ss = np.random.SeedSequence(seed).spawn(3)
    train_df, test_df = read_nsl_kdd(data_dir)
    X_train, X_test, feature_names = _features(train_df, test_df, preprocessing, encoding, scaling)
    meta = {
        "concepts": concepts,
        "normal_by": normal_by,
        "encoding": encoding,
        "scaling": scaling,
        "preprocessing": preprocessing,
        "contamination": contamination,
        "random_state": seed,
        "feature_names": feature_names,
    }
    if concepts == "faber2024":
        if contamination != 0:
            raise CladValueError(
                f"nsl_kdd: contamination={contamination!r} does not apply to concepts='faber2024' "
                "(the published generator keeps every anomaly for testing)"
            )
        from .faber import scenario_faber

        y = np.r_[
            train_df["family"].to_numpy() != "normal", test_df["family"].to_numpy() != "normal"
        ]
        return scenario_faber(
            np.vstack([X_train, X_test]),
            y.astype(np.int8),
            name="nsl-kdd",
            loader=loader,
            n_concepts=n_concepts,
            size_per_concept=size_per_concept,
            assignment=assignment,
            kmeans_random_state=kmeans_random_state,
            anomaly_shuffle=anomaly_shuffle,
            order=order,
            difficulty=difficulty,
            random_state=seed,
            metadata=meta,
        )
    split_rng = np.random.default_rng(split_ss)
    g_train = _groups(train_df, train_df, concepts, normal_by, split_rng)
    g_test = _groups(test_df, train_df, concepts, normal_by, split_rng)
    contam_rng = np.random.default_rng(contam_ss)
    pairs = []
    for name in g_train:
        tr_idx, te_idx = _rows(name, g_train[name], g_test[name], contamination, contam_rng)
        y_tr = (train_df["family"].to_numpy()[tr_idx] != "normal").astype(np.int8)
        y_te = (test_df["family"].to_numpy()[te_idx] != "normal").astype(np.int8)
        pairs.append((Concept(name, X_train[tr_idx], y_tr), Concept(name, X_test[te_idx], y_te)))
    return order_concepts(
        pairs,
        order=order,
        difficulty=difficulty,
        random_state=order_ss,
        name="nsl-kdd",
        metadata=meta,
        loader=loader,
    )


def _groups(
    df: pd.DataFrame, train_df: pd.DataFrame, concepts: str, normal_by: str, rng
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """concept name -> (normal row indices, anomaly row indices) in ``df`` (the training file's
    protocols and normal services name and part the concepts)."""
    normal = (df["family"] == "normal").to_numpy()
    if concepts == "protocol":
        proto = df["protocol_type"].to_numpy()
        return {
            p: (np.flatnonzero(normal & (proto == p)), np.flatnonzero(~normal & (proto == p)))
            for p in sorted(train_df["protocol_type"].unique())
        }
    k = len(FAMILIES)
    if normal_by == "service":
        part_of = _service_parts(train_df.loc[train_df["family"] == "normal", "service"], k)
        part = df["service"].map(part_of).fillna(k - 1).to_numpy(dtype=int)
    else:
        part = np.empty(len(df), dtype=int)
        idx = np.flatnonzero(normal)
        part[idx] = np.arange(len(idx)) % k
        part[idx] = rng.permutation(part[idx])
    fam = df["family"].to_numpy()
    return {
        f: (np.flatnonzero(normal & (part == i)), np.flatnonzero(fam == f))
        for i, f in enumerate(FAMILIES)
    }


def _rows(name: str, train, test, contamination: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """A concept's training and test row indices from its (normal, anomaly) rows in each file:
    every normal training row and, with ``contamination``, that share of anomalies drawn by
    ``rng``; every test row."""
    (tr_normal, tr_anom), (te_normal, te_anom) = train, test
    if len(tr_normal) == 0 or len(te_normal) + len(te_anom) == 0:
        raise DataError(f"nsl_kdd: concept {name!r} has no normal training rows or no test rows")
    n_anom = 0
    if contamination > 0:
        n_anom = min(len(tr_anom), int(round(contamination * len(tr_normal) / (1 - contamination))))
    tr_idx = np.sort(np.concatenate([tr_normal, rng.choice(tr_anom, n_anom, replace=False)]))
    return tr_idx, np.sort(np.concatenate([te_normal, te_anom]))
