(module
  ;; Dot products of one query against many vectors, four lanes at a time.
  ;; Vectors are float32, `dims` a multiple of 4, laid out one after another.
  (memory (export "memory") 1)
  (func (export "scores")
    (param $vectors i32) (param $query i32) (param $dims i32) (param $count i32) (param $out i32)
    (local $bytes i32) (local $row i32) (local $end i32) (local $d i32)
    (local $a v128) (local $b v128)
    (local.set $bytes (i32.shl (local.get $dims) (i32.const 2)))
    (local.set $row (local.get $vectors))
    (local.set $end (i32.add (local.get $vectors) (i32.mul (local.get $bytes) (local.get $count))))
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $row) (local.get $end)))
        (local.set $a (v128.const f32x4 0 0 0 0))
        (local.set $b (v128.const f32x4 0 0 0 0))
        (local.set $d (i32.const 0))
        ;; two accumulators over 32 bytes per step; a final 16-byte step when dims % 8 == 4
        (block $cols_done
          (loop $cols
            (br_if $cols_done (i32.gt_u (i32.add (local.get $d) (i32.const 32)) (local.get $bytes)))
            (local.set $a (f32x4.add (local.get $a)
              (f32x4.mul (v128.load (i32.add (local.get $row) (local.get $d)))
                         (v128.load (i32.add (local.get $query) (local.get $d))))))
            (local.set $b (f32x4.add (local.get $b)
              (f32x4.mul (v128.load offset=16 (i32.add (local.get $row) (local.get $d)))
                         (v128.load offset=16 (i32.add (local.get $query) (local.get $d))))))
            (local.set $d (i32.add (local.get $d) (i32.const 32)))
            (br $cols)))
        (if (i32.lt_u (local.get $d) (local.get $bytes))
          (then
            (local.set $a (f32x4.add (local.get $a)
              (f32x4.mul (v128.load (i32.add (local.get $row) (local.get $d)))
                         (v128.load (i32.add (local.get $query) (local.get $d))))))))
        (local.set $a (f32x4.add (local.get $a) (local.get $b)))
        (f32.store (local.get $out)
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $a)) (f32x4.extract_lane 1 (local.get $a)))
            (f32.add (f32x4.extract_lane 2 (local.get $a)) (f32x4.extract_lane 3 (local.get $a)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (br $rows)))))
