"""Joint kinematics in numpy, joint by joint, batch last (internal).

The joint-level model of every joint type (rotation, origin, motion subspace,
joint velocity and its apparent derivative) written with the joint's own
coordinates, independently of the node plan that the compiled kernels use
(:mod:`ahbm._engine.kernels`): the tests compare the two codings.
"""

from __future__ import annotations

import numpy as np

from ahbm._engine.batch import cross, mm_bl
from ahbm.kinematics.rotations import skew
from ahbm.kinematics.tree import (
    EULER,
    FIXED,
    FREE,
    FREE_EULER,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
    UNIVERSAL,
    Model,
)

__all__ = ["joint_kinematics"]

_AXIS = {"X": 0, "Y": 1, "Z": 2}


def rmul_axis_bl(M, k, c, s):
    """In place M <- M @ R_k(angle) for M (3, 3, N), with c, s = cos, sin (N,)."""
    i, j = (k + 1) % 3, (k + 2) % 3
    Mi = M[:, i].copy()
    Mj = M[:, j]
    M[:, i] = Mi * c + Mj * s
    M[:, j] = Mj * c - Mi * s


def rot_axis_T_bl(k, c, s, v):
    """R_k(angle).T @ v for v (3, N)."""
    i, j = (k + 1) % 3, (k + 2) % 3
    out = np.empty_like(v)
    out[i] = c * v[i] + s * v[j]
    out[j] = c * v[j] - s * v[i]
    out[k] = v[k]
    return out


def quat_to_matrix_bl(qv):
    """Rotation matrices (3, 3, N) from quaternions (4, N) (x, y, z, w), normalizing."""
    x, y, z, w = qv / np.sqrt(np.sum(qv * qv, axis=0))
    R = np.empty((3, 3) + x.shape)
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    R[0, 0] = 1 - 2 * (yy + zz)
    R[0, 1] = 2 * (xy - wz)
    R[0, 2] = 2 * (xz + wy)
    R[1, 0] = 2 * (xy + wz)
    R[1, 1] = 1 - 2 * (xx + zz)
    R[1, 2] = 2 * (yz - wx)
    R[2, 0] = 2 * (xz - wy)
    R[2, 1] = 2 * (yz + wx)
    R[2, 2] = 1 - 2 * (xx + yy)
    return R


def _joint_constants(model: Model, i: int) -> dict:
    """Per-joint constants, computed once per model (cached on the model)."""
    cache = model.cache
    if i in cache:
        return cache[i]
    body = model.bodies[i]
    E = body.rotation
    c = {
        "E": E,
        "E_is_identity": bool(np.array_equal(E, np.eye(3))),
        "t": body.position[:, None].copy(),
    }
    code = model.joint_codes[i]
    if code in (REVOLUTE, PRISMATIC):
        a = body.joint.axis
        K = skew(a)
        c["EK"] = (E @ K)[:, :, None]
        c["EK2"] = (E @ K @ K)[:, :, None]
        c["Ea"] = (E @ a)[:, None]
        S = np.zeros((6, 1))
        if code == REVOLUTE:
            S[:3, 0] = a
        else:
            S[3:, 0] = a
        c["S"] = S
    if body.joint.sequence is not None:
        c["axes"] = [_AXIS[ch] for ch in body.joint.sequence]
    cache[i] = c
    return c


def joint_kinematics(model: Model, i: int, q: np.ndarray, qd: np.ndarray | None):
    """Kinematics of joint i for q (nq, N) and qd (nv, N) (internal, batch last).

    Returns
    -------
    R : (3, 3) or (3, 3, N)  parent_R_body
    p : (3, 1) or (3, N)     body origin in the parent frame
    S : (6, k) or (6, k, N)  motion subspace in body coordinates
    vJ : (6, N) or None      joint velocity S qd (body coordinates)
    cJ : (6, N) or None      apparent derivative (dS/dt) qd in body coordinates; None if zero
    """
    k0 = _joint_constants(model, i)
    code = model.joint_codes[i]
    E, t = k0["E"], k0["t"]
    N = q.shape[1]
    qi, vi = model.q_index[i], model.v_index[i]
    nq, nv = model.joint_nq[i], model.joint_nv[i]
    qj = q[qi : qi + nq]
    qdj = None if qd is None else qd[vi : vi + nv]
    vJ = cJ = None
    if code == FIXED:
        if qd is not None:
            vJ = np.zeros((6, N))
        return E, t, np.zeros((6, 0)), vJ, None
    if code == REVOLUTE:
        ang = qj[0]
        s = np.sin(ang)
        c1 = 1.0 - np.cos(ang)
        R = k0["EK"] * s
        R += k0["EK2"] * c1
        R += E[:, :, None]
        S = k0["S"]
        if qd is not None:
            vJ = S * qdj
        return R, t, S, vJ, None
    if code == PRISMATIC:
        p = t + k0["Ea"] * qj[0]
        S = k0["S"]
        if qd is not None:
            vJ = S * qdj
        return E, p, S, vJ, None
    if code == SPHERICAL:
        RJ = quat_to_matrix_bl(qj)
        R = RJ if k0["E_is_identity"] else mm_bl(E, RJ)
        S = np.zeros((6, 3))
        S[:3] = np.eye(3)
        if qd is not None:
            vJ = np.zeros((6, N))
            vJ[:3] = qdj
        return R, t, S, vJ, None

    # joints with a rotation sequence and/or a translation in the joint frame
    if code in (UNIVERSAL, EULER):
        trans, angles, adot, nt = None, qj, qdj, 0
    elif code == FREE_EULER:
        trans, angles, nt = qj[:3], qj[3:], 3
        adot = None if qd is None else qdj[3:]
    elif code == PLANAR:
        trans = np.concatenate([qj[:2], np.zeros((1, N))], axis=0)
        angles, adot, nt = qj[2:], None if qd is None else qdj[2:], 2
    elif code == FREE:
        trans, angles, adot, nt = qj[:3], None, None, 3
    else:  # pragma: no cover
        raise AssertionError(code)

    if angles is None:  # free: quaternion, angular columns = identity
        RJ = quat_to_matrix_bl(qj[3:7])
        k_ang = 3
        S = np.zeros((6, nt + 3, N))
        for m in range(3):
            S[m, nt + m] = 1.0
    else:
        axes = [2] if code == PLANAR else k0["axes"]
        k_ang = len(axes)
        cs = [(np.cos(angles[j]), np.sin(angles[j])) for j in range(k_ang)]
        RJ = np.zeros((3, 3, N))
        RJ[0, 0] = RJ[1, 1] = RJ[2, 2] = 1.0
        for j, ax in enumerate(axes):
            rmul_axis_bl(RJ, ax, *cs[j])
        # s_j = (R_{j+1} ... R_n)^T e_j
        S = np.zeros((6, nt + k_ang, N))
        for j in range(k_ang):
            col = np.zeros((3, N))
            col[axes[j]] = 1.0
            for m in range(j + 1, k_ang):
                col = rot_axis_T_bl(axes[m], *cs[m], col)
            S[:3, nt + j] = col
    R = RJ if k0["E_is_identity"] else mm_bl(E, RJ)
    if trans is None:
        p = t
    else:
        p = t + (trans if k0["E_is_identity"] else E @ trans)
        for m in range(nt):
            S[3:, m] = RJ[m]  # columns of RJ.T are the rows of RJ
    if qd is not None:
        vJ = S[:, 0] * qdj[0]
        for m in range(1, nv):
            vJ += S[:, m] * qdj[m]
        cJ = np.zeros((6, N))
        if adot is not None and k_ang > 1:
            for j in range(k_ang):
                for m in range(j + 1, k_ang):
                    cJ[:3] += (adot[j] * adot[m]) * cross(S[:3, nt + j], S[:3, nt + m], axis=0)
        if trans is not None:
            cJ[3:] = -cross(vJ[:3], vJ[3:], axis=0)
    return R, p, S, vJ, cJ
