/* ahbm view3d: the page's viewer (classic script; three.js is the global THREE).
 *
 * The scene description is the JSON of #ahbm-meta and the frames are one
 * base64 block (#ahbm-data) decoded once into float32 views, frames first.
 * Each frame sets the bodies' poses (one Group per body), rewrites in place
 * the instance matrices of the batched mesh of the bodies' shapes and of the
 * instanced force arrows and muscle pieces, and the markers' points, and
 * moves the plot cursors: nothing is allocated per frame, and the scene is a
 * handful of draw calls with few triangles (what a software rasterizer pays
 * for). window.__ahbm is the page's interface for tests and scripts.
 */
(function () {
  "use strict";
  var VERSION = 1;

  // ------------------------------------------------------------------ helpers (pure)
  function decodeBase64(text) {
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
    var bin = atob(text), n = bin.length, out = new Uint8Array(n);
    for (var i = 0; i < n; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  // index of the last frame whose time is <= t (times sorted), clamped to [0, n-1]
  function frameAt(times, t) {
    var lo = 0, hi = times.length - 1;
    if (hi <= 0 || t <= times[0]) return 0;
    if (t >= times[hi]) return hi;
    while (hi - lo > 1) {
      var mid = (lo + hi) >> 1;
      if (times[mid] <= t) lo = mid; else hi = mid;
    }
    return lo;
  }

  // value in [0, 1] -> rgb from blue (0) to red (1); NaN -> grey
  function colormap(v, out) {
    if (!(v === v)) { out[0] = 0.55; out[1] = 0.55; out[2] = 0.55; return out; }
    var a = Math.min(1, Math.max(0, v));
    out[0] = 0.15 + 0.75 * a; out[1] = 0.3 - 0.2 * a; out[2] = 0.85 - 0.75 * a;
    return out;
  }

  function arrays(meta, bytes) {
    var out = {};
    Object.keys(meta.arrays).forEach(function (name) {
      var a = meta.arrays[name];
      var Ctor = a.dtype === "u4" ? Uint32Array : Float32Array;
      out[name] = new Ctor(bytes.buffer, bytes.byteOffset + a.offset, a.length);
    });
    return out;
  }

  var api = window.__ahbm = {
    version: VERSION, ready: false, errors: [], util: { decodeBase64: decodeBase64, frameAt: frameAt, colormap: colormap },
  };
  window.addEventListener("error", function (e) { api.errors.push(String(e.message || e)); });

  // ------------------------------------------------------------------ data
  var meta = JSON.parse(document.getElementById("ahbm-meta").textContent);
  if (meta.version !== VERSION) throw new Error("ahbm view3d: page format " + meta.version + ", viewer " + VERSION);
  var A = arrays(meta, decodeBase64(document.getElementById("ahbm-data").textContent.trim()));
  var nFrames = meta.n_frames, times = A.time;
  var up = new THREE.Vector3().fromArray(meta.up).normalize();
  var lo = new THREE.Vector3().fromArray(meta.bounds[0]), hi = new THREE.Vector3().fromArray(meta.bounds[1]);
  var extent = Math.max(hi.clone().sub(lo).length(), 1e-3);
  var scale = meta.joint_scale > 0 ? meta.joint_scale : extent / 2;

  // ------------------------------------------------------------------ renderer, camera, lights
  var host = document.getElementById("ahbm-scene");
  // Multisampling costs a software rasterizer (SwiftShader, llvmpipe: no GPU) half its
  // frame rate; there the edges stay unsmoothed so that playback keeps its pace.
  function softwareWebGL() {
    try {
      var c = document.createElement("canvas"), gl = c.getContext("webgl2") || c.getContext("webgl");
      if (!gl) return false;
      var ext = gl.getExtension("WEBGL_debug_renderer_info");
      var name = String(gl.getParameter(ext ? ext.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
      var lose = gl.getExtension("WEBGL_lose_context");
      if (lose) lose.loseContext();
      return /swiftshader|llvmpipe|softpipe|software/i.test(name);
    } catch (e) { return false; }
  }
  var software = softwareWebGL();
  var renderer = new THREE.WebGLRenderer({ antialias: !software });
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  renderer.setClearColor(0xf4f5f7, 1);
  host.insertBefore(renderer.domElement, host.firstChild);
  var scene = new THREE.Scene();
  var camera = new THREE.PerspectiveCamera(35, 1, extent / 500, extent * 50);
  camera.up.copy(up);
  var controls = new THREE.OrbitControls(camera, renderer.domElement);
  controls.enableDamping = false;
  var hemi = new THREE.HemisphereLight(0xffffff, 0x667080, 1.6);
  scene.add(hemi);
  var sunLight = new THREE.DirectionalLight(0xffffff, 1.6);
  camera.add(sunLight); sunLight.position.set(0.3, 1, 0.6);
  scene.add(camera);
  document.getElementById("ahbm-title").textContent = meta.title || "";

  // the walking direction: world x made orthogonal to up; lateral = forward x up
  var forward = new THREE.Vector3(1, 0, 0);
  if (Math.abs(forward.dot(up)) > 0.9) forward.set(0, 1, 0);
  forward.addScaledVector(up, -forward.dot(up)).normalize();
  var lateral = new THREE.Vector3().crossVectors(forward, up).normalize();

  // ground grid at the lowest point of the scene, square with the walking direction
  var floor = Infinity;
  [lo, hi].forEach(function (c) {
    for (var k = 0; k < 8; k++) {
      var p = new THREE.Vector3(k & 1 ? hi.x : lo.x, k & 2 ? hi.y : lo.y, k & 4 ? hi.z : lo.z);
      floor = Math.min(floor, p.dot(up));
    }
  });
  var centre = lo.clone().add(hi).multiplyScalar(0.5);
  var gridSize = Math.ceil(Math.max(extent * 1.5, 2 * scale));
  var grid = new THREE.GridHelper(gridSize, gridSize * 2, 0xb5bac2, 0xd5d8dd);
  var basis = new THREE.Matrix4().makeBasis(forward, up, lateral);
  grid.quaternion.setFromRotationMatrix(basis);
  grid.position.copy(centre).addScaledVector(up, floor - centre.dot(up));
  scene.add(grid);

  // ------------------------------------------------------------------ bodies
  // A software rasterizer (SwiftShader: no GPU, as in headless Chromium) spends about half a
  // microsecond on each triangle however small it is drawn, so a shape gets the triangles its
  // size on screen asks for: a sphere of radius r (scale: the model's size, about what the
  // camera frames) has 10 to 24 segments around.
  var spheres = {};
  function unitSphereFor(r) {
    var n = r < 0.03 * scale ? 10 : r < 0.1 * scale ? 16 : 24;
    if (!spheres[n]) spheres[n] = new THREE.SphereGeometry(1, n, Math.round(2 * n / 3));
    return spheres[n];
  }
  var unitBox = new THREE.BoxGeometry(1, 1, 1);
  var unitCylinder = new THREE.CylinderGeometry(1, 1, 1, 20);
  function triangleSlab(points, thickness) {
    var a = new THREE.Vector3().fromArray(points[0]), b = new THREE.Vector3().fromArray(points[1]);
    var c = new THREE.Vector3().fromArray(points[2]);
    var n = new THREE.Vector3().crossVectors(b.clone().sub(a), c.clone().sub(a)).normalize().multiplyScalar(thickness / 2);
    var v = [a, b, c].map(function (p) { return p.clone().add(n); }).concat([a, b, c].map(function (p) { return p.clone().sub(n); }));
    var pos = [];
    v.forEach(function (p) { pos.push(p.x, p.y, p.z); });
    var g = new THREE.BufferGeometry();
    g.setAttribute("position", new THREE.Float32BufferAttribute(pos, 3));
    g.setIndex([0, 1, 2, 5, 4, 3, 0, 3, 4, 0, 4, 1, 1, 4, 5, 1, 5, 2, 2, 5, 3, 2, 3, 0]);
    g.computeVertexNormals();
    return g;
  }
  var meshGeometries = meta.meshes.map(function (m) {
    var g = new THREE.BufferGeometry();
    g.setAttribute("position", new THREE.BufferAttribute(A[m.vertices], 3));
    g.setIndex(new THREE.BufferAttribute(A[m.indices], 1));
    g.computeVertexNormals();
    return g;
  });
  // a shape's geometry (in its own frame) and its scale
  function shapeGeometry(s) {
    var g, sx = 1, sy = 1, sz = 1;
    if (s.kind === "ellipsoid") { g = unitSphereFor(Math.max(s.radii[0], s.radii[1], s.radii[2])); sx = s.radii[0]; sy = s.radii[1]; sz = s.radii[2]; }
    else if (s.kind === "box") { g = unitBox; sx = s.size[0]; sy = s.size[1]; sz = s.size[2]; }
    else if (s.kind === "cylinder") { g = unitCylinder; sx = sz = s.radius; sy = s.length; }
    else if (s.kind === "capsule") g = s.radius < 0.03 * scale ? new THREE.CapsuleGeometry(s.radius, s.length, 2, 8)
      : new THREE.CapsuleGeometry(s.radius, s.length, 6, 16);
    else if (s.kind === "mesh") { g = meshGeometries[s.mesh]; sx = s.scale[0]; sy = s.scale[1]; sz = s.scale[2]; }
    else if (s.kind === "triangle") g = triangleSlab(s.points, s.thickness);
    else return null;
    if (g.getAttribute("uv")) g.deleteAttribute("uv"); // a batch's geometries share their attributes
    return { geometry: g, scale: new THREE.Vector3(sx, sy, sz) };
  }
  // Each body is a Group that holds its pose. Its shapes are instances of one BatchedMesh per
  // opacity, shared by all the bodies (one draw call for all their opaque shapes), whose
  // matrices (the body's pose times the shape's placement) a frame rewrites.
  var shapeItems = [], batchOf = {};
  var bodies = meta.bodies.map(function (b, k) {
    var group = new THREE.Group();
    group.name = b.name;
    b.shapes.forEach(function (s) {
      var sg = shapeGeometry(s);
      if (!sg) return;
      var opacity = s.opacity == null ? 1 : s.opacity, key = String(opacity);
      batchOf[key] = batchOf[key] || { opacity: opacity, items: [] };
      var local = new THREE.Matrix4().compose(new THREE.Vector3().fromArray(s.position || [0, 0, 0]),
        new THREE.Quaternion().fromArray(s.quaternion || [0, 0, 0, 1]), sg.scale);
      var item = { body: k, local: local, geometry: sg.geometry, color: s.color || [0.8, 0.7, 0.6],
        label: "body " + b.name + (s.name ? " (" + s.name + ")" : ""), batch: null, id: -1 };
      batchOf[key].items.push(item);
      shapeItems.push(item);
    });
    scene.add(group);
    return group;
  });
  var batches = Object.keys(batchOf).map(function (key) {
    var spec = batchOf[key], geoms = [], nv = 0, ni = 0;
    spec.items.forEach(function (it) {
      if (geoms.indexOf(it.geometry) < 0) {
        geoms.push(it.geometry); nv += it.geometry.getAttribute("position").count; ni += it.geometry.index.count;
      }
    });
    var transparent = spec.opacity < 1;
    var batch = new THREE.BatchedMesh(spec.items.length, nv, ni, new THREE.MeshPhongMaterial({
      color: 0xffffff, shininess: 30, transparent: transparent, opacity: spec.opacity, depthWrite: !transparent }));
    var ids = geoms.map(function (g) { return batch.addGeometry(g); });
    batch.frustumCulled = batch.perObjectFrustumCulled = false; // the bodies move: all are drawn
    batch.sortObjects = transparent; // back to front
    batch.userData.labels = [];
    spec.items.forEach(function (it) {
      it.batch = batch;
      it.id = batch.addInstance(ids[geoms.indexOf(it.geometry)]);
      batch.setColorAt(it.id, new THREE.Color(it.color[0], it.color[1], it.color[2]));
      batch.userData.labels[it.id] = it.label;
    });
    scene.add(batch);
    return batch;
  });
  // the bodies' frames: one set of line segments (x red, y green, z blue), moved each frame
  var axesPos = null, axisLength = 0.08 * scale;
  if (meta.frames && bodies.length) {
    var axesGeometry = new THREE.BufferGeometry(), axesCol = [];
    axesPos = new THREE.BufferAttribute(new Float32Array(18 * bodies.length), 3).setUsage(THREE.DynamicDrawUsage);
    bodies.forEach(function () { axesCol.push(1, 0, 0, 1, 0, 0, 0, 0.7, 0, 0, 0.7, 0, 0, 0, 1, 0, 0, 1); });
    axesGeometry.setAttribute("position", axesPos);
    axesGeometry.setAttribute("color", new THREE.Float32BufferAttribute(axesCol, 3));
    var axes = new THREE.LineSegments(axesGeometry, new THREE.LineBasicMaterial({ vertexColors: true, depthTest: false }));
    axes.renderOrder = 2;
    axes.frustumCulled = false;
    scene.add(axes);
  }
  var nb = bodies.length, unitScale = new THREE.Vector3(1, 1, 1);
  var bodyMatrices = bodies.map(function () { return new THREE.Matrix4(); });

  // ------------------------------------------------------------------ instanced items
  var tmpM = new THREE.Matrix4(), tmpQ = new THREE.Quaternion(), tmpP = new THREE.Vector3();
  var tmpS = new THREE.Vector3(), tmpD = new THREE.Vector3(), yAxis = new THREE.Vector3(0, 1, 0);
  var rgb = [0, 0, 0], tmpC = new THREE.Color();
  function instanced(geometry, count, color) {
    var mesh = new THREE.InstancedMesh(geometry, new THREE.MeshPhongMaterial({ color: 0xffffff, shininess: 40 }), Math.max(count, 1));
    mesh.count = count;
    mesh.frustumCulled = false;
    mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
    for (var i = 0; i < count; i++) mesh.setColorAt(i, tmpC.setRGB(color[0], color[1], color[2]));
    if (mesh.instanceColor) mesh.instanceColor.setUsage(THREE.DynamicDrawUsage);
    scene.add(mesh);
    return mesh;
  }
  // a segment p -> q drawn by a unit cylinder (base at 0, top at y = 1) of radius r
  function segmentMatrix(arr, k, px, py, pz, qx, qy, qz, r) {
    tmpD.set(qx - px, qy - py, qz - pz);
    var L = tmpD.length();
    if (!(L > 1e-9)) { hide(arr, k); return; }
    tmpQ.setFromUnitVectors(yAxis, tmpD.multiplyScalar(1 / L));
    tmpM.compose(tmpP.set(px, py, pz), tmpQ, tmpS.set(r, L, r));
    tmpM.toArray(arr, 16 * k);
  }
  function hide(arr, k) { for (var j = 0; j < 16; j++) arr[16 * k + j] = 0; }

  var segGeometry = new THREE.CylinderGeometry(1, 1, 1, 10).translate(0, 0.5, 0);
  var tubeGeometry = new THREE.CylinderGeometry(1, 1, 1, 8, 1, true).translate(0, 0.5, 0); // open: muscle pieces
  var coneGeometry = new THREE.ConeGeometry(1, 1, 14).translate(0, 0.5, 0);

  // markers: one point each, drawn as a lit sphere by its fragments (an impostor): a
  // sphere of triangles would cost the software rasterizer hundreds of them per marker
  var nm = meta.markers.labels.length, rMarker = 0.007 * scale;
  var markerPoints = null, markerPos = null, markerSeen = null;
  var hemiDir = new THREE.Vector3(), sunDir = new THREE.Vector3(), tmpV = new THREE.Vector3(), bufferSize = new THREE.Vector2();
  if (nm) {
    var mg = new THREE.BufferGeometry(), mcol = new Float32Array(3 * nm);
    markerPos = new THREE.BufferAttribute(new Float32Array(3 * nm), 3).setUsage(THREE.DynamicDrawUsage);
    markerSeen = new THREE.BufferAttribute(new Float32Array(nm), 1).setUsage(THREE.DynamicDrawUsage);
    var k0 = 0;
    meta.markers.groups.forEach(function (g) {
      for (var i = 0; i < g.count; i++) {
        tmpC.setRGB(g.color[0], g.color[1], g.color[2]).toArray(mcol, 3 * (k0 + i));
      }
      k0 += g.count;
    });
    mg.setAttribute("position", markerPos);
    mg.setAttribute("seen", markerSeen);
    mg.setAttribute("mcolor", new THREE.BufferAttribute(mcol, 3));
    var markerMaterial = new THREE.ShaderMaterial({
      uniforms: { radius: { value: rMarker }, height: { value: 1 }, sunDir: { value: sunDir }, hemiDir: { value: hemiDir },
        sky: { value: new THREE.Color(0xffffff).multiplyScalar(1.6) }, ground: { value: new THREE.Color(0x667080).multiplyScalar(1.6) },
        sun: { value: new THREE.Color(0xffffff).multiplyScalar(1.6) } },
      vertexShader: [
        "attribute vec3 mcolor; attribute float seen; uniform float radius; uniform float height; varying vec3 vColor;",
        "void main() {",
        "  vColor = mcolor;",
        "  vec4 mv = modelViewMatrix * vec4(position, 1.0);",
        "  gl_Position = seen > 0.5 ? projectionMatrix * mv : vec4(2.0, 2.0, 2.0, 1.0);",
        "  gl_PointSize = seen * radius * projectionMatrix[1][1] * height / max(-mv.z, 1e-6);", // diameter, pixels
        "}"].join("\n"),
      // the lighting of the scene's Phong materials (hemisphere, sun, a little Blinn-Phong shine)
      fragmentShader: [
        "uniform vec3 sunDir; uniform vec3 hemiDir; uniform vec3 sky; uniform vec3 ground; uniform vec3 sun; varying vec3 vColor;",
        "void main() {",
        "  vec2 p = 2.0 * gl_PointCoord - 1.0; p.y = -p.y;",
        "  float rr = dot(p, p);",
        "  if (rr > 1.0) discard;",
        "  vec3 n = vec3(p, sqrt(1.0 - rr));",
        "  vec3 light = mix(ground, sky, 0.5 * dot(n, hemiDir) + 0.5) + max(dot(n, sunDir), 0.0) * sun;",
        "  float shine = pow(max(dot(n, normalize(sunDir + vec3(0.0, 0.0, 1.0))), 0.0), 40.0) * max(dot(n, sunDir), 0.0);",
        "  gl_FragColor = vec4(vColor * light * 0.3183099 + 0.00936 * shine * sun, 1.0);",
        "  #include <colorspace_fragment>",
        "}"].join("\n"),
    });
    markerPoints = new THREE.Points(mg, markerMaterial);
    markerPoints.frustumCulled = false;
    markerPoints.onBeforeRender = function (r, sc, cam) { // the lights' directions in the camera's frame
      hemiDir.setFromMatrixPosition(hemi.matrixWorld).transformDirection(cam.matrixWorldInverse);
      sunDir.setFromMatrixPosition(sunLight.matrixWorld).sub(tmpV.setFromMatrixPosition(sunLight.target.matrixWorld));
      sunDir.transformDirection(cam.matrixWorldInverse);
      markerMaterial.uniforms.height.value = r.getDrawingBufferSize(bufferSize).y;
    };
    scene.add(markerPoints);
  }
  // forces: shaft and head
  var nf = meta.forces.names.length, forceShaft = null, forceHead = null;
  if (nf) {
    forceShaft = instanced(segGeometry, nf, [0.1, 0.65, 0.2]);
    forceHead = instanced(coneGeometry, nf, [0.1, 0.65, 0.2]);
    forceShaft.userData.labels = forceHead.userData.labels = meta.forces.names;
  }
  // muscles: one cylinder per straight piece of each path
  var mus = meta.muscles, nmus = mus.names.length, segOwner = [], segPoint = [];
  var offset = 0;
  mus.counts.forEach(function (c, m) {
    for (var j = 0; j + 1 < c; j++) { segOwner.push(m); segPoint.push(offset + j); }
    offset += c;
  });
  var nPathPoints = offset, nseg = segOwner.length, muscleMesh = null;
  if (nseg) {
    muscleMesh = instanced(tubeGeometry, nseg, [0.75, 0.2, 0.2]);
    muscleMesh.userData.labels = segOwner.map(function (m) { return "muscle " + mus.names[m]; });
    if (mus.color_by) {
      var leg = document.getElementById("ahbm-legend");
      leg.innerHTML = "muscle " + mus.color_by + ": 0<span class=bar></span>1";
    }
  }
  // centre of mass
  var comMesh = null;
  if (meta.com) {
    comMesh = new THREE.Mesh(new THREE.SphereGeometry(0.02 * scale, 16, 12), new THREE.MeshPhongMaterial({ color: 0xf2c200 }));
    comMesh.userData.label = "centre of mass";
    scene.add(comMesh);
  }

  // ------------------------------------------------------------------ one frame
  var frame = -1;
  var bp = A.body_pos, bq = A.body_quat, M = A.markers, F = A.forces, MP = A.muscle_points;
  var MV = A.muscle_values, C = A.com;
  var fScale = meta.forces.scale, rForce = 0.006 * scale, rMuscle = 0.005 * scale;
  var cursorHooks = [];

  function applyFrame(i) {
    var k, o, arr;
    for (k = 0; k < nb; k++) {
      o = i * nb + k;
      var body = bodies[k];
      body.position.set(bp[3 * o], bp[3 * o + 1], bp[3 * o + 2]);
      body.quaternion.set(bq[4 * o], bq[4 * o + 1], bq[4 * o + 2], bq[4 * o + 3]);
      bodyMatrices[k].compose(body.position, body.quaternion, unitScale);
      if (axesPos) {
        arr = axesPos.array;
        for (var a = 0; a < 3; a++) {
          tmpV.set(a === 0 ? axisLength : 0, a === 1 ? axisLength : 0, a === 2 ? axisLength : 0).applyQuaternion(body.quaternion);
          o = 18 * k + 6 * a;
          arr[o] = body.position.x; arr[o + 1] = body.position.y; arr[o + 2] = body.position.z;
          arr[o + 3] = body.position.x + tmpV.x; arr[o + 4] = body.position.y + tmpV.y; arr[o + 5] = body.position.z + tmpV.z;
        }
      }
    }
    if (axesPos) axesPos.needsUpdate = true;
    for (k = 0; k < shapeItems.length; k++) {
      var it = shapeItems[k];
      it.batch.setMatrixAt(it.id, tmpM.multiplyMatrices(bodyMatrices[it.body], it.local));
    }
    if (markerPoints) {
      var mp = markerPos.array, ms = markerSeen.array;
      for (k = 0; k < nm; k++) {
        o = 3 * (i * nm + k);
        var x = M[o], y = M[o + 1], z = M[o + 2], seen = (x === x && y === y && z === z) ? 1 : 0;
        ms[k] = seen;
        mp[3 * k] = seen ? x : 0; mp[3 * k + 1] = seen ? y : 0; mp[3 * k + 2] = seen ? z : 0;
      }
      markerPos.needsUpdate = markerSeen.needsUpdate = true;
    }
    if (nf) {
      var sa = forceShaft.instanceMatrix.array, ha = forceHead.instanceMatrix.array;
      for (k = 0; k < nf; k++) {
        o = 6 * (i * nf + k);
        var px = F[o], py = F[o + 1], pz = F[o + 2], fx = F[o + 3] * fScale, fy = F[o + 4] * fScale, fz = F[o + 5] * fScale;
        var L = Math.sqrt(fx * fx + fy * fy + fz * fz);
        if (!(L > 1e-4 * scale) || !(px === px)) { hide(sa, k); hide(ha, k); continue; }
        var head = Math.min(0.3 * L, 0.05 * scale), t = 1 - head / L;
        segmentMatrix(sa, k, px, py, pz, px + t * fx, py + t * fy, pz + t * fz, rForce);
        segmentMatrix(ha, k, px + t * fx, py + t * fy, pz + t * fz, px + fx, py + fy, pz + fz, 2.2 * rForce);
      }
      forceShaft.instanceMatrix.needsUpdate = forceHead.instanceMatrix.needsUpdate = true;
    }
    if (muscleMesh) {
      arr = muscleMesh.instanceMatrix.array;
      var base = 3 * i * nPathPoints;
      for (k = 0; k < nseg; k++) {
        o = base + 3 * segPoint[k];
        var ax = MP[o], ay = MP[o + 1], az = MP[o + 2], bx = MP[o + 3], by = MP[o + 4], bz = MP[o + 5];
        if (ax === ax && bx === bx) segmentMatrix(arr, k, ax, ay, az, bx, by, bz, rMuscle); else hide(arr, k);
      }
      muscleMesh.instanceMatrix.needsUpdate = true;
      if (MV) {
        var ca = muscleMesh.instanceColor.array;
        for (k = 0; k < nseg; k++) {
          colormap(MV[i * nmus + segOwner[k]], rgb);
          ca[3 * k] = rgb[0]; ca[3 * k + 1] = rgb[1]; ca[3 * k + 2] = rgb[2];
        }
        muscleMesh.instanceColor.needsUpdate = true;
      }
    }
    if (comMesh) comMesh.position.set(C[3 * i], C[3 * i + 1], C[3 * i + 2]);
  }

  // ------------------------------------------------------------------ camera: presets, follow
  var root = nb ? bodies[0] : null;
  var fit = 1 / (2 * Math.tan(camera.fov * Math.PI / 360)); // distance per length in view
  var dist = 1.15 * Math.max(extent, scale) * fit;
  var followBox = document.getElementById("ahbm-follow");
  var travel = 0;
  if (nb && nFrames > 1) {
    var last = (nFrames - 1) * nb;
    travel = Math.hypot(bp[3 * last] - bp[0], bp[3 * last + 1] - bp[1], bp[3 * last + 2] - bp[2]);
  }
  followBox.checked = travel > 0.5 * scale;
  if (followBox.checked) dist = 1.6 * scale * fit;
  function focus() {
    if (followBox.checked && root) return root.position.clone();
    return centre.clone();
  }
  function view(name) {
    var target = focus();
    var dir = name === "frontal" ? forward.clone() : name === "transverse" ? up.clone().addScaledVector(forward, -0.02).normalize()
      : name === "sagittal" ? lateral.clone() : lateral.clone().multiplyScalar(0.85).addScaledVector(forward, 0.35).addScaledVector(up, 0.3).normalize();
    camera.position.copy(target).addScaledVector(dir, dist);
    controls.target.copy(target);
    controls.update();
    needsRender = true;
  }
  var lastFocus = null;
  function follow() {
    if (!followBox.checked || !root) return;
    var p = root.position;
    if (lastFocus) {
      tmpD.set(p.x - lastFocus.x, p.y - lastFocus.y, p.z - lastFocus.z);
      tmpD.addScaledVector(up, -tmpD.dot(up)); // horizontal moves only
      camera.position.add(tmpD); controls.target.add(tmpD);
      lastFocus.add(tmpD);
    } else lastFocus = p.clone();
  }
  followBox.addEventListener("change", function () { lastFocus = null; view("sagittal"); });

  // ------------------------------------------------------------------ plots
  var plotsHost = document.getElementById("ahbm-plots");
  function setupPlot(p) {
    var div = document.createElement("div");
    div.className = "plot";
    var base = document.createElement("canvas"), over = document.createElement("canvas");
    div.appendChild(base); div.appendChild(over);
    plotsHost.appendChild(div);
    var y = A[p.key], ymin = Infinity, ymax = -Infinity;
    for (var i = 0; i < y.length; i++) if (y[i] === y[i]) { ymin = Math.min(ymin, y[i]); ymax = Math.max(ymax, y[i]); }
    if (!(ymax >= ymin)) { ymin = 0; ymax = 1; }
    if (ymax - ymin < 1e-9) { ymin -= 0.5; ymax += 0.5; }
    var pad = 0.08 * (ymax - ymin); ymin -= pad; ymax += pad;
    var t0 = times[0], t1 = times[nFrames - 1] > t0 ? times[nFrames - 1] : t0 + 1;
    var L = 46, R = 10, T = 20, B = 20, W = 1, H = 1;
    function sx(t) { return L + (t - t0) / (t1 - t0) * (W - L - R); }
    function sy(v) { return T + (ymax - v) / (ymax - ymin) * (H - T - B); }
    function draw() {
      var dpr = window.devicePixelRatio || 1;
      W = div.clientWidth; H = div.clientHeight;
      [base, over].forEach(function (c) { c.width = W * dpr; c.height = H * dpr; c.getContext("2d").setTransform(dpr, 0, 0, dpr, 0, 0); });
      var g = base.getContext("2d");
      g.clearRect(0, 0, W, H);
      g.font = "12px system-ui, sans-serif"; g.fillStyle = "#222";
      g.fillText(p.title + (p.unit ? " (" + p.unit + ")" : ""), L, 14);
      g.fillStyle = "#666"; g.font = "10px system-ui, sans-serif";
      g.fillText(ymax.toPrecision(3), 2, T + 8); g.fillText(ymin.toPrecision(3), 2, H - B);
      g.fillText(t0.toFixed(2) + " s", L, H - 5); g.fillText(t1.toFixed(2) + " s", W - R - 36, H - 5);
      g.strokeStyle = "#ccc"; g.strokeRect(L, T, W - L - R, H - T - B);
      if (ymin < 0 && ymax > 0) { g.beginPath(); g.moveTo(L, sy(0)); g.lineTo(W - R, sy(0)); g.stroke(); }
      g.strokeStyle = "#1f5fbf"; g.lineWidth = 1.5; g.beginPath();
      var pen = false;
      for (var i = 0; i < nFrames; i++) {
        if (!(y[i] === y[i])) { pen = false; continue; }
        if (pen) g.lineTo(sx(times[i]), sy(y[i])); else g.moveTo(sx(times[i]), sy(y[i]));
        pen = true;
      }
      g.stroke();
      cursor(frame < 0 ? 0 : frame);
    }
    function cursor(i) {
      var g = over.getContext("2d");
      g.clearRect(0, 0, W, H);
      var x = sx(times[i]);
      g.strokeStyle = "#d23"; g.lineWidth = 1; g.beginPath(); g.moveTo(x, T); g.lineTo(x, H - B); g.stroke();
      if (y[i] === y[i]) {
        g.fillStyle = "#d23"; g.beginPath(); g.arc(x, sy(y[i]), 3, 0, 6.2832); g.fill();
        g.font = "11px system-ui, sans-serif"; g.fillText(y[i].toPrecision(4), Math.min(x + 5, W - 60), T + 12);
      }
    }
    div.addEventListener("pointerdown", function (e) {
      var r = div.getBoundingClientRect();
      var t = t0 + (e.clientX - r.left - L) / (W - L - R) * (t1 - t0);
      pause(); setFrame(frameAt(times, t));
    });
    cursorHooks.push(cursor);
    return draw;
  }
  var plotDrawers = meta.plots.map(setupPlot);

  // ------------------------------------------------------------------ controls
  var scrub = document.getElementById("ahbm-scrub"), playBtn = document.getElementById("ahbm-play");
  var timeLabel = document.getElementById("ahbm-time"), speedSel = document.getElementById("ahbm-speed");
  scrub.max = String(nFrames - 1);
  var playing = false, speed = 1, playTime = times[0], needsRender = true;

  // the controls and plot cursors follow the frame at most 20 times a second while playing
  // (each update lays out and paints the page); the scene follows every frame
  var uiShown = -1, uiTime = -Infinity;
  function showUi(now) {
    if (uiShown === frame || (playing && now - uiTime < 50)) return;
    uiShown = frame; uiTime = now;
    scrub.value = String(frame);
    timeLabel.textContent = "t = " + times[frame].toFixed(3) + " s   frame " + (frame + 1) + " / " + nFrames;
    for (var k = 0; k < cursorHooks.length; k++) cursorHooks[k](frame);
  }
  function setFrame(i) {
    i = Math.max(0, Math.min(nFrames - 1, i | 0));
    if (i === frame) return;
    frame = i;
    applyFrame(i);
    follow();
    if (!playing) showUi(performance.now());
    needsRender = true;
  }
  function play() {
    if (nFrames < 2) return;
    if (frame >= nFrames - 1) playTime = times[0]; else playTime = times[Math.max(frame, 0)];
    playing = true; playBtn.innerHTML = "&#10074;&#10074;"; lastTick = null;
  }
  function pause() { playing = false; playBtn.innerHTML = "&#9654;"; showUi(performance.now()); }
  playBtn.addEventListener("click", function () { if (playing) pause(); else play(); });
  scrub.addEventListener("input", function () { pause(); setFrame(+scrub.value); });
  speedSel.addEventListener("change", function () { speed = +speedSel.value; });
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "SELECT") return;
    if (e.code === "Space") { e.preventDefault(); if (playing) pause(); else play(); }
    else if (e.code === "ArrowRight") { pause(); setFrame(frame + 1); }
    else if (e.code === "ArrowLeft") { pause(); setFrame(frame - 1); }
  });
  Array.prototype.forEach.call(document.querySelectorAll("[data-view]"), function (b) {
    b.addEventListener("click", function () { lastFocus = null; view(b.getAttribute("data-view")); lastFocus = root ? root.position.clone() : null; });
  });
  controls.addEventListener("change", function () { needsRender = true; });

  // hover: the label of the marker, force, muscle or body under the pointer
  var raycaster = new THREE.Raycaster(), pointer = new THREE.Vector2(), tip = document.getElementById("ahbm-tip");
  var hoverEvent = null;
  renderer.domElement.addEventListener("pointermove", function (e) { hoverEvent = e; });
  renderer.domElement.addEventListener("pointerleave", function () { hoverEvent = null; tip.style.display = "none"; });
  function hover() {
    var e = hoverEvent; hoverEvent = null;
    var r = renderer.domElement.getBoundingClientRect();
    pointer.set((e.clientX - r.left) / r.width * 2 - 1, -(e.clientY - r.top) / r.height * 2 + 1);
    raycaster.setFromCamera(pointer, camera);
    var targets = [];
    [forceShaft, forceHead, muscleMesh].forEach(function (m) { if (m) { m.boundingSphere = null; targets.push(m); } });
    if (comMesh) targets.push(comMesh);
    batches.forEach(function (b) { targets.push(b); });
    var hit = raycaster.intersectObjects(targets, false)[0];
    var text = null;
    if (hit) {
      if (hit.batchId != null) text = hit.object.userData.labels[hit.batchId];
      else if (hit.instanceId != null && hit.object.userData.labels) text = hit.object.userData.labels[hit.instanceId];
      else text = hit.object.userData.label || null;
    }
    // the markers (points): the nearest one along the ray that passes within its radius
    var ray = raycaster.ray, best = hit ? hit.distance : Infinity;
    for (var k = 0; markerPoints && k < nm; k++) {
      if (!markerSeen.array[k]) continue;
      tmpV.fromArray(markerPos.array, 3 * k);
      var along = tmpD.copy(tmpV).sub(ray.origin).dot(ray.direction);
      if (along > 0 && along < best && ray.distanceSqToPoint(tmpV) <= rMarker * rMarker) { best = along; text = "marker " + meta.markers.labels[k]; }
    }
    if (text) {
      tip.textContent = text; tip.style.display = "block";
      tip.style.left = (e.clientX - r.left + 12) + "px"; tip.style.top = (e.clientY - r.top + 12) + "px";
    } else tip.style.display = "none";
  }

  // ------------------------------------------------------------------ the loop and its frame rate
  var lastTick = null, measuring = null;
  // the times of the last 64 frames drawn (a ring: nothing is allocated per frame)
  var RING = 64, ring = new Float64Array(RING), nDrawn = 0;
  function resize() {
    var w = host.clientWidth, h = host.clientHeight;
    if (w < 1 || h < 1) return;
    renderer.setSize(w, h, false);
    camera.aspect = w / h; camera.updateProjectionMatrix();
    plotDrawers.forEach(function (d) { d(); });
    needsRender = true;
  }
  if (typeof ResizeObserver === "function") new ResizeObserver(resize).observe(host);
  window.addEventListener("resize", resize);

  // frames drawn per second over the frames drawn since `since` (at most the last 64), or NaN
  function rateSince(since) {
    var n = Math.min(nDrawn, RING), last = ring[(nDrawn - 1) % RING], k = 1, first = last;
    while (k < n && ring[(nDrawn - 1 - k) % RING] >= since) { first = ring[(nDrawn - 1 - k) % RING]; k++; }
    return k > 1 && last > first ? 1000 * (k - 1) / (last - first) : NaN;
  }
  api.fps = NaN;

  // While playing, a frame rate below 40 lowers the drawing resolution by steps of 1/8 (down to
  // 3/8), judged on the frames drawn at least 300 ms after the previous step, and above 55
  // raises it again; pausing draws the still frame at full resolution.
  var fullRatio = renderer.getPixelRatio(), ratio = fullRatio, ratioSince = 0;
  function setRatio(r) {
    if (Math.abs(r - renderer.getPixelRatio()) < 1e-3) return;
    renderer.setPixelRatio(r);
    renderer.setSize(host.clientWidth, host.clientHeight, false);
    needsRender = true;
  }
  function adapt(now) {
    if (!playing) { if (ratio !== fullRatio) { ratio = fullRatio; setRatio(ratio); } ratioSince = now; return; }
    if (now - ratioSince < 300) return;
    var fps = rateSince(ratioSince + 100); // the frames drawn after the step settled
    if (!(fps > 0)) return;
    var r = ratio;
    if (fps < 40) r = Math.max(0.375 * fullRatio, ratio - 0.125 * fullRatio);
    else if (fps > 55) r = Math.min(fullRatio, ratio + 0.125 * fullRatio);
    if (Math.abs(r - ratio) > 1e-6) { ratio = r; setRatio(r); ratioSince = now; if (measuring) measuring.ratioSteps++; }
  }

  function tick(now) {
    requestAnimationFrame(tick);
    var m = measuring, t0 = m ? performance.now() : 0, t1 = t0, t2 = t0;
    adapt(now);
    if (playing) {
      if (lastTick !== null) playTime += (now - lastTick) / 1000 * speed;
      lastTick = now;
      if (playTime > times[nFrames - 1]) playTime = times[0] + (playTime - times[nFrames - 1]) % Math.max(times[nFrames - 1] - times[0], 1e-9);
      var before = frame;
      setFrame(frameAt(times, playTime));
      if (m && frame !== before) m.advanced++;
      if (m) t1 = performance.now();
      showUi(now);
      if (m) t2 = performance.now();
    }
    if (hoverEvent) hover();
    if (needsRender) {
      renderer.render(scene, camera);
      needsRender = false;
      ring[nDrawn % RING] = now; nDrawn++;
      if (m) {
        var t3 = performance.now();
        m.rendered++; m.frameMs += t1 - t0; m.uiMs += t2 - t1; m.renderMs += t3 - t2;
        if (m.firstTick === null) { m.firstTick = now; m.firstFrame = frame; }
        m.lastTick = now; m.lastFrame = frame;
      }
      api.fps = rateSince(now - 1000);
    }
  }

  // Plays from the current frame at the current speed for `warmup` ms (and then until the
  // drawing resolution has not changed for 1 s, 4 s more at most), then for `ms` ms, and
  // reports the frames drawn per second of wall time in those `ms` (each showing the trial's
  // frame at the time the clock has reached), the trial's frames shown (first and last drawn,
  // and the trial's seconds and the frame clock's seconds between them), the drawing
  // resolution, and the viewer's own time per frame drawn: moving the frame (bodies, items),
  // the control bar and plot cursors, and three.js's render call (which submits the draw
  // calls; the rasterizing is done by the browser in parallel and is not in these times).
  api.measure = function (ms, warmup) {
    return new Promise(function (resolve) {
      if (!playing) play();
      var begin = performance.now();
      function start() {
        var now = performance.now();
        if (now - begin < (warmup || 0) || (now - ratioSince < 1000 && now - begin < (warmup || 0) + 4000)) {
          setTimeout(start, 50);
          return;
        }
        var ratio0 = renderer.getPixelRatio();
        measuring = { rendered: 0, advanced: 0, frameMs: 0, uiMs: 0, renderMs: 0, ratioSteps: 0,
          firstTick: null, lastTick: null, firstFrame: frame, lastFrame: frame };
        var t0 = performance.now();
        setTimeout(function () {
          var elapsed = (performance.now() - t0) / 1000, m = measuring, n = Math.max(m.rendered, 1);
          measuring = null;
          var size = renderer.getDrawingBufferSize(new THREE.Vector2());
          resolve({ fps: m.rendered / elapsed, frames_drawn: m.rendered, frames_advanced: m.advanced, seconds: elapsed,
            speed: speed, first: m.firstFrame, last: m.lastFrame, trial_seconds: times[m.lastFrame] - times[m.firstFrame],
            clock_seconds: m.firstTick === null ? 0 : (m.lastTick - m.firstTick) / 1000,
            warmup_seconds: (t0 - begin) / 1000, pixel_ratio: renderer.getPixelRatio(), pixel_ratio_start: ratio0,
            ratio_steps: m.ratioSteps, drawing_buffer: [size.x, size.y],
            ms_per_frame: { frame: m.frameMs / n, ui: m.uiMs / n, render: m.renderMs / n,
              total: (m.frameMs + m.uiMs + m.renderMs) / n } });
        }, ms);
      }
      start();
    });
  };
  api.nFrames = nFrames;
  api.frame = function () { return frame; };
  api.time = function () { return times[frame]; };
  api.setFrame = function (i) { setFrame(i); renderer.render(scene, camera); needsRender = false; return frame; };
  api.play = play; api.pause = pause; api.view = function (n) { view(n); renderer.render(scene, camera); };
  api.setSpeed = function (s) { speed = +s; speedSel.value = String(s); };
  api.bodyPositions = function () { return bodies.map(function (b) { return b.position.toArray(); }); };
  api.info = function () {
    return { calls: renderer.info.render.calls, triangles: renderer.info.render.triangles,
      software: software, pixel_ratio: renderer.getPixelRatio(), bodies: nb, markers: nm, forces: nf, muscle_segments: nseg, meshes: meta.meshes.length,
      plots: meta.plots.length, webgl2: renderer.capabilities.isWebGL2 !== false };
  };
  // client coordinates of marker k at the current frame (null when hidden or behind)
  api.markerScreen = function (k) {
    var o = 3 * (frame * nm + k);
    if (!(k >= 0 && k < nm) || !(M[o] === M[o])) return null;
    var v = new THREE.Vector3(M[o], M[o + 1], M[o + 2]).project(camera);
    if (v.z > 1) return null;
    var r = renderer.domElement.getBoundingClientRect();
    return [r.left + (v.x + 1) / 2 * r.width, r.top + (1 - v.y) / 2 * r.height];
  };
  api.labelAt = function (x, y) { hoverEvent = { clientX: x, clientY: y }; hover(); return tip.style.display === "block" ? tip.textContent : null; };

  resize();
  setFrame(0);
  view(nb ? "default" : "sagittal");
  lastFocus = root ? root.position.clone() : null;
  renderer.render(scene, camera);
  api.ready = true;
  requestAnimationFrame(tick);
})();
